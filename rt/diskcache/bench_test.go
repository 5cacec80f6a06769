package diskcache

import "testing"

func BenchmarkGetHit1MiB(b *testing.B) {
	c := openTest(b, b.TempDir(), nil, nil)
	k := testKey(1)
	if err := c.Put(k, payload(k, 1<<20)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := c.Get(k); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkGetMiss(b *testing.B) {
	c := openTest(b, b.TempDir(), nil, nil)
	k := testKey(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Get(k)
	}
}
