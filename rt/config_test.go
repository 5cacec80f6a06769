package rt_test

import (
	"os/exec"
	"strings"
	"testing"
)

// initCacheConfig is read while the test binary's packages are
// initialized, before testing has registered its flags.
var initCacheConfig = defaultCacheConfig()

// TestConfigDuringInit: a configuration read during package initialization
// in a test binary is the one read later: the persistent cache is off in
// tests unless DGEN_CACHE_DIR names a directory, whenever it is asked.
func TestConfigDuringInit(t *testing.T) {
	later := defaultCacheConfig()
	if initCacheConfig.Disk.Persistent || later.Disk.Persistent {
		t.Errorf("persistent cache in a test binary: during init %v, later %v; want off both times",
			initCacheConfig.Disk.Persistent, later.Disk.Persistent)
	}
}

// TestNoFlagImport: rt does not import flag, directly or not (an
// application's flags are its own), nor the libraries of the opt-in
// packages.
func TestNoFlagImport(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list rt's dependencies")
	}
	out, err := exec.Command(goTool, "list", "-deps", "github.com/dgen-go/dgen/rt").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "flag", p == "testing":
			t.Errorf("rt depends on package %s", p)
		case strings.Contains(p, "fleetcache"), strings.Contains(p, "go-redis"), p == "net/http":
			t.Errorf("rt depends on %s: the remote tier must be opt-in", p)
		case strings.Contains(p, "prometheus"), strings.Contains(p, "google/pprof"):
			t.Errorf("rt depends on %s: metrics and profiles must be opt-in (rt/metrics, rt/devprof)", p)
		}
	}
}
