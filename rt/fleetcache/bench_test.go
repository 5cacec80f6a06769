package fleetcache

import (
	"context"
	"testing"
	"time"
)

// BenchmarkFetch measures a remote hit of a 100 KiB binary (about what
// PoCL's binary of a small program weighs) against real servers: "warm" on
// an open connection, "fresh" with a new Fleet each time, as in a process
// that starts (connect, request, checks).
func BenchmarkFetch(b *testing.B) {
	for name, srv := range map[string]string{"redis": startRedisURL(b), "http": startNginxURL(b)} {
		key, bin := testKey(1), testBinary(1, 100<<10)
		pub, err := Open(Config{URL: srv, InsecureUnsigned: true})
		if err != nil {
			b.Fatal(err)
		}
		pub.Publish(key, bin)
		pub.Close(5 * time.Second)
		for _, fresh := range []bool{false, true} {
			mode := "warm"
			if fresh {
				mode = "fresh"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				f, _ := Open(Config{URL: srv, InsecureUnsigned: true})
				for b.Loop() {
					if fresh {
						f.Close(0)
						f, _ = Open(Config{URL: srv, InsecureUnsigned: true})
					}
					if _, ok := f.Fetch(context.Background(), key); !ok {
						b.Fatal("miss")
					}
				}
				f.Close(0)
			})
		}
	}
}
