package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// TestCacheListTuning checks that `dgen cache ls` shows a tuning record's
// constant and winner, and "?" for a record it cannot read.
func TestCacheListTuning(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("DGEN_CACHE_DIR", dir)
	c, err := diskcache.Open(diskcache.DefaultConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	dev := diskcache.Device{Platform: "P", Name: "gpu0"}
	for i, rec := range []string{`{"v":1,"const":"x.TILE","winner":"32"}`, `garbage`} {
		key := diskcache.Key{Device: dev, ImageID: tunePrefix + "x.TILE", ImageHash: uint64(i), Options: "tune=8,16,32", ProgramName: "tuning record of TILE"}
		if err := c.Put(key, []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"cache", "ls"}, &out, &errb); code != 0 {
		t.Fatalf("status %d: %s", code, errb.String())
	}
	for _, want := range []string{"tuning record of TILE: winner 32", "tuning record of TILE: winner ?", "tune=8,16,32"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dgen cache ls lacks %q:\n%s", want, out.String())
		}
	}
}
