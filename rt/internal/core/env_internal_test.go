package core

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestDeprecatedNames: an old name sets its field where the new one is
// unset, is ignored where the new one is set, and is said once per
// process through slog.Default(), naming its replacement.
func TestDeprecatedNames(t *testing.T) {
	var log bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	defer slog.SetDefault(old)
	deprecatedSaid.Clear()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for range 2 {
		cfg, err := ConfigFromEnv(env(map[string]string{"DGEN_CACHE_THRESHOLD_DAYS": "3", "DGEN_TUNE": "force", "DGEN_CUDA_GRAPH": "0"}))
		if err != nil || cfg.Cache.Disk.MaxAge != 72*time.Hour || !cfg.Retune || cfg.Graphs != GraphsLoop {
			t.Fatalf("old names: MaxAge %v, Retune %v, Graphs %v, %v", cfg.Cache.Disk.MaxAge, cfg.Retune, cfg.Graphs, err)
		}
	}
	for _, want := range []string{"DGEN_CACHE_THRESHOLD_DAYS is deprecated: set DGEN_CACHE_MAX_AGE", "DGEN_TUNE is deprecated: set DGEN_RETUNE", "DGEN_CUDA_GRAPH is deprecated: set DGEN_GRAPHS"} {
		if n := strings.Count(log.String(), want); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", want, n, log.String())
		}
	}
	cfg, err := ConfigFromEnv(env(map[string]string{"DGEN_CACHE_THRESHOLD_DAYS": "3", "DGEN_CACHE_MAX_AGE": "1h", "DGEN_RETUNE": "0", "DGEN_TUNE": "force"}))
	if err != nil || cfg.Cache.Disk.MaxAge != time.Hour || cfg.Retune {
		t.Errorf("old and new names: MaxAge %v, Retune %v, %v; want the new ones'", cfg.Cache.Disk.MaxAge, cfg.Retune, err)
	}
}

// TestLibraryEnv: a backend reads only the variables of its libraries
// that the table lists; another is a bug that panics.
func TestLibraryEnv(t *testing.T) {
	t.Setenv("POCL_CACHE_DIR", "/x")
	if got := libraryGetenv("POCL_CACHE_DIR"); got != "/x" {
		t.Errorf("POCL_CACHE_DIR = %q", got)
	}
	restore := librarySetenv("POCL_CACHE_DIR", "/y")
	if got := libraryGetenv("POCL_CACHE_DIR"); got != "/y" {
		t.Errorf("set POCL_CACHE_DIR = %q", got)
	}
	restore()
	if got := libraryGetenv("POCL_CACHE_DIR"); got != "/x" {
		t.Errorf("restored POCL_CACHE_DIR = %q", got)
	}
	for _, name := range []string{"HOME", "DGEN_DEVICE"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("a backend read %s, which is no library's variable of the table, without a panic", name)
				}
			}()
			libraryGetenv(name)
		}()
	}
}
