package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt/fleetcache/fleettest"
)

// TestTuneExample runs the example three times: with an empty cache it
// times every candidate and verifies the product; a second run on the same
// cache directory times nothing; a third, on an empty directory with a
// Redis fleet tier that the first run published to, times nothing either.
func TestTuneExample(t *testing.T) {
	testenv.RequireDevice(t)
	if os.Getenv("DGEN_DEVICE") == "" {
		t.Setenv("DGEN_DEVICE", "cpu")
	}
	srv := fleettest.StartRedis(t)
	t.Setenv("DGEN_CACHE_REMOTE", srv.URL)
	t.Setenv("DGEN_CACHE_REMOTE_KEY", "example fleet key")
	t.Setenv("DGEN_RETUNE", "")
	dir := t.TempDir()
	var first Result
	for i, step := range []struct {
		dir    string
		cached bool
	}{
		{dir, false},
		{dir, true},
		{t.TempDir(), true}, // another node: an empty disk, the fleet's record
	} {
		t.Setenv("DGEN_CACHE_DIR", step.dir)
		benchReps = 0
		if i == 2 {
			benchReps = 2
		}
		res, err := run(64)
		if err != nil {
			t.Fatalf("run %d: %v (%+v)", i, err, res)
		}
		if !res.OK || res.Cached != step.cached || (step.cached && res.Timed != 0) || (!step.cached && res.Timed < 3) {
			t.Errorf("run %d: %+v; want ok, cached %v", i, res, step.cached)
		}
		if res.Default != 16 {
			t.Errorf("run %d: the context's TILE is %d after tuning; want the default 16, which Tune leaves alone", i, res.Default)
		}
		if i == 2 && (len(res.Bench) < 3 || !strings.HasPrefix(res.Bench[slices.IndexFunc(res.Bench, func(r BenchRow) bool { return r.Tile == res.Winner })].Role, "winner")) {
			t.Errorf("bench rows %+v; want the winner among them", res.Bench)
		}
		if i == 0 {
			first = res
		} else if res.Winner != first.Winner {
			t.Errorf("run %d: winner %d; the first run chose %d", i, res.Winner, first.Winner)
		}
	}
}

// TestTuneExampleBadSize: a size that is not a multiple of the largest
// tile is refused, not run.
func TestTuneExampleBadSize(t *testing.T) {
	if res, err := run(100); err == nil || res.OK {
		t.Errorf("run(100) = %+v, %v; want an error", res, err)
	}
}
