package fleetcache

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// TestRejectedWarnsOnce checks that rejected entries, counted by every
// Fleet, are reported by one warning per process, which names the key as
// the thing to check for a signature by another key.
func TestRejectedWarnsOnce(t *testing.T) {
	rejectWarned.Store(false)
	srv := stores(t)["redis"]
	var warn syncBuffer
	for i := range 3 {
		key, bin := testKey(100+i), testBinary(i, 1000)
		f := openFleet(t, srv.URL, func(c *Config) { c.Secret = []byte("right"); c.Logger = warn.logger() })
		f.st.put(context.Background(), address(key.Encode()), sealEntry(key.Encode(), bin, []byte("forged")))
		if _, ok := f.Fetch(context.Background(), key); ok {
			t.Fatal("a forged entry was fetched")
		}
		if s := f.Stats(); s.Rejected != 1 || s.Misses != 1 {
			t.Errorf("fleet %d: stats %+v; want 1 rejected, 1 miss", i, s)
		}
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 || !strings.Contains(warn.String(), "DGEN_CACHE_REMOTE_KEY") {
		t.Errorf("%d warnings; want 1 naming DGEN_CACHE_REMOTE_KEY:\n%s", n, warn.String())
	}
}

// TestForeignKeyKeepsEntries checks, on Redis and nginx, that a node
// whose DGEN_CACHE_REMOTE_KEY differs from the fleet's (or that has none),
// in read_write mode, neither loads nor replaces the fleet's signed entry
// when it builds the program itself; and that an entry that is merely
// garbage is replaced.
func TestForeignKeyKeepsEntries(t *testing.T) {
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for i, tc := range []struct {
				name, nodeKey string
				garbage       bool // the store holds garbage, not the fleet's entry
				replaced      bool
			}{
				{"another key", "not the fleet's", false, false},
				{"no key", "", false, false},
				{"garbage", "fleet key", true, true},
			} {
				key, fleetBin, nodeBin := testKey(200+i), testBinary(1, 3000), testBinary(2, 3000)
				fleet := openFleet(t, srv.URL, func(c *Config) { c.Secret = []byte("fleet key") })
				if tc.garbage {
					fleet.st.put(context.Background(), address(key.Encode()), bytes.Repeat([]byte{0x5a}, 500))
				} else {
					fleet.Publish(key, fleetBin)
					flush(fleet)
				}
				node := openFleet(t, srv.URL, func(c *Config) { c.Secret = []byte(tc.nodeKey); c.Mode = ReadWrite })
				var cache diskcache.Remote = node
				if _, ok := cache.Fetch(context.Background(), key); ok {
					t.Fatalf("%s: the node fetched an entry it cannot verify", tc.name)
				}
				bin, ok, done := cache.Claim(context.Background(), key)
				if ok || done == nil {
					t.Fatalf("%s: claim: ok %v, %d bytes", tc.name, ok, len(bin))
				}
				done(nodeBin) // the node built it
				flush(node)
				want := fleetBin
				if tc.replaced {
					want = nodeBin
				}
				got, ok := fleet.Fetch(context.Background(), key)
				if tc.garbage && !tc.replaced {
					continue
				}
				if !ok || !bytes.Equal(got, want) {
					t.Errorf("%s: the fleet fetches ok %v, its own entry %v; want replaced %v", tc.name, ok, bytes.Equal(got, fleetBin), tc.replaced)
				}
			}
		})
	}
}
