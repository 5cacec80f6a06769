package main

import (
	"errors"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/diskcache"
)

// TestNoRedisLinked: an application that does not import rt/fleetcache
// links no Redis client. This test binary is such an application (it
// imports rt and rt/opencl only); its build information lists the modules
// linked into it, as `go version -m` prints them.
func TestNoRedisLinked(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information in this binary")
	}
	for _, m := range bi.Deps {
		if strings.Contains(m.Path, "redis") {
			t.Errorf("module %s is linked into an application that does not import rt/fleetcache", m.Path)
		}
	}
}

// TestRemoteWithoutImport: DGEN_CACHE_REMOTE in a program that did not
// import rt/fleetcache fails Open with an error that names the import.
func TestRemoteWithoutImport(t *testing.T) {
	t.Setenv("DGEN_CACHE_REMOTE", "redis://127.0.0.1:1")
	ctx, err := rt.Open()
	if err == nil {
		ctx.Close()
		t.Fatal("Open succeeded with DGEN_CACHE_REMOTE set and no remote tier imported")
	}
	if !errors.Is(err, diskcache.ErrNoRemote) || !strings.Contains(err.Error(), `import _ "github.com/dgen-go/dgen/rt/fleetcache"`) {
		t.Errorf("Open: %v; want an error wrapping diskcache.ErrNoRemote that names the import", err)
	}
}
