package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/fleetcache"
)

func TestCacheCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DGEN_CACHE_DIR", dir)
	c, err := diskcache.Open(diskcache.DefaultConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"gpu0", "cpu0"} {
		key := diskcache.Key{Device: diskcache.Device{Platform: "P", Name: dev}, ImageID: "x.Prog", ImageHash: 1, ProgramName: "prog"}
		if err := c.Put(key, []byte("binary of "+dev)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("DGEN_CACHE_REMOTE", "redis://u:secretpw@cache.example:6379")
	t.Setenv("DGEN_CACHE_REMOTE_KEY", "fleet key") // without one the configuration is refused, here as by rt.Open
	for range 2 {
		if err := fleetcache.Record(dir, fleetcache.Stats{Hits: 3, Misses: 1, Publishes: 2}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ls"}, 0, "2 entries"},
		{[]string{"ls", "-json"}, 0, `"image_id": "x.Prog"`},
		{[]string{"stat"}, 0, "entries      2"},
		{[]string{"stat", "-json"}, 0, `"entries": 2`},
		{[]string{"stat"}, 0, "6 hits, 2 misses, 4 publishes, 0 errors"},
		{[]string{"stat"}, 0, "remote       redis://u:xxxxx@cache.example:6379"},
		{[]string{"stat", "-json"}, 0, `"publishes": 4`},
		{[]string{"verify"}, 0, "2 checked, 0 bad"},
		{[]string{"clear", "gpu0"}, 0, "removed 1 entries"},
		{[]string{"gc", "-json"}, 0, `"remaining": 1`},
		{[]string{"clear", "-json"}, 0, `"removed": 1`},
		{[]string{"bogus"}, 2, ""},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"cache"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("dgen cache %v: status %d, output %q, stderr %q; want %d and %q", tc.args, code, out.String(), errb.String(), tc.code, tc.want)
		}
		if strings.Contains(strings.Join(tc.args, " "), "-json") && code == 0 && !json.Valid(out.Bytes()) {
			t.Errorf("dgen cache %v: invalid JSON %q", tc.args, out.String())
		}
	}
}

// TestCacheListSpecVariants checks that dgen cache ls tells the
// specialization-constant variants of one program apart: one row each,
// with its values.
func TestCacheListSpecVariants(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DGEN_CACHE_DIR", dir)
	c, err := diskcache.Open(diskcache.DefaultConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, bs := range []string{"16", "32"} {
		var enc []byte
		for _, s := range []string{"BlockSize", bs, "Unroll", "4"} {
			enc = binary.AppendUvarint(enc, uint64(len(s)))
			enc = append(enc, s...)
		}
		key := diskcache.Key{Device: diskcache.Device{Platform: "P", Name: "cpu0"}, ImageID: "x.Prog", ImageHash: 1, ProgramName: "prog", SpecConsts: enc}
		if err := c.Put(key, []byte("binary "+bs)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"ls"}, []string{"SPEC", "BlockSize=16 Unroll=4", "BlockSize=32 Unroll=4"}},
		{[]string{"ls", "-json"}, []string{`"specs": "BlockSize=16 Unroll=4"`, `"specs": "BlockSize=32 Unroll=4"`}},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(append([]string{"cache"}, tt.args...), &out, &errb); code != 0 {
			t.Fatalf("dgen cache %v: status %d, stderr %q", tt.args, code, errb.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("dgen cache %v: output %q lacks %q", tt.args, out.String(), w)
			}
		}
	}
	if got := specValues([]byte{9, 'x'}); got != "0978" {
		t.Errorf("specValues of a truncated key = %q, want its hexadecimal", got)
	}
}
