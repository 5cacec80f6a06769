package rt_test

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// TestOneValidation: every setting with a bad value fails Open the same
// way whether Go code gave it (OpenConfig) or the environment (Open): an
// error wrapping ErrInvalidArgument that names the setting's Config field
// and its variable, with the same message where the value can be said
// both ways. Nothing is opened: the checks come first.
func TestOneValidation(t *testing.T) {
	tests := []struct {
		field, env, value string
		set               func(*rt.Config) // nil: the value cannot be given in Go
		same              bool             // the value reads the same both ways
	}{
		{"Backend", "DGEN_BACKEND", "cdua", func(c *rt.Config) { c.Backend = "cdua" }, true},
		{"Device", "DGEN_DEVICE", "0:", func(c *rt.Config) { c.Device = "0:" }, true},
		{"Device", "DGEN_DEVICE", "-1:0", func(c *rt.Config) { c.Device = "-1:0" }, true},
		{"Device", "DGEN_DEVICE", "0:x", func(c *rt.Config) { c.Device = "0:x" }, true},
		{"AllocPolicy", "DGEN_ALLOC_POLICY", "lifo", func(c *rt.Config) { c.AllocPolicy = rt.AllocPolicy(9) }, false},
		{"AllocMaxHeld", "DGEN_ALLOC_MAX_HELD", "-1", func(c *rt.Config) { c.AllocMaxHeld = -1 }, true},
		{"Trace", "DGEN_TRACE", "bogus", func(c *rt.Config) { c.Trace = "bogus" }, true},
		{"Cache.EvictionThreshold", "DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD", "-1", func(c *rt.Config) { c.Cache.EvictionThreshold = -1 }, true},
		{"Cache.CompileOptions", "DGEN_PROGRAM_COMPILE_OPTIONS", "-D", func(c *rt.Config) { c.Cache.CompileOptions = "-D" }, true},
		{"Cache.Disk.MaxSize", "DGEN_CACHE_MAX_SIZE", "-1", func(c *rt.Config) { c.Cache.Disk.MaxSize = -1 }, true},
		{"Cache.Disk.MaxAge", "DGEN_CACHE_MAX_AGE", "-1d", func(c *rt.Config) { c.Cache.Disk.MaxAge = -24 * time.Hour }, true},
		{"Cache.Disk.MaxAge", "DGEN_CACHE_MAX_AGE", "-36h", func(c *rt.Config) { c.Cache.Disk.MaxAge = -36 * time.Hour }, true},
		{"Cache.Disk.MinImageSize", "DGEN_CACHE_MIN_IMAGE_SIZE", "-1", func(c *rt.Config) { c.Cache.Disk.MinImageSize = -1 }, true},
		{"Cache.Disk.MaxImageSize", "DGEN_CACHE_MAX_IMAGE_SIZE", "-1K", func(c *rt.Config) { c.Cache.Disk.MaxImageSize = -1024 }, true},
		{"Cache.Disk.LockTimeout", "DGEN_CACHE_LOCK_TIMEOUT", "-1s", func(c *rt.Config) { c.Cache.Disk.LockTimeout = -time.Second }, true},
		{"Cache.Remote.URL", "DGEN_CACHE_REMOTE", "redis://127.0.0.1:1", func(c *rt.Config) { c.Cache.Remote.URL = "redis://127.0.0.1:1" }, true},
		{"Cache.Remote.URL", "DGEN_CACHE_REMOTE", "ftp://x", func(c *rt.Config) { c.Cache.Remote.URL = "ftp://x" }, true},
		{"Cache.Remote.Timeout", "DGEN_CACHE_REMOTE_TIMEOUT", "-2s", func(c *rt.Config) { c.Cache.Remote.Timeout = -2 * time.Second }, true},
		{"Cache.Remote.Lease", "DGEN_CACHE_REMOTE_LEASE", "-1m0s", func(c *rt.Config) { c.Cache.Remote.Lease = -time.Minute }, true},
		{"Cache.Remote.Mode", "DGEN_CACHE_REMOTE_MODE", "both", func(c *rt.Config) { c.Cache.Remote.Mode = rt.RemoteMode(5) }, false},
		{"Graphs", "DGEN_GRAPHS", "sideways", func(c *rt.Config) { c.Graphs = rt.GraphMode(7) }, false},
		{"QueuePool", "", "", func(c *rt.Config) { c.QueuePool = -1 }, false},
		// Values only the environment can get wrong: a boolean, a number.
		{"Profiling", "DGEN_PROFILE", "maybe", nil, false},
		{"SyncLaunches", "DGEN_SYNC_LAUNCHES", "always", nil, false},
		{"Retune", "DGEN_RETUNE", "sometimes", nil, false},
		{"Retune", "DGEN_TUNE", "sometimes", nil, false},
		{"Cache.Disk.MaxAge", "DGEN_CACHE_THRESHOLD_DAYS", "a week", nil, false},
		{"Cache.InMemory", "DGEN_CACHE_IN_MEM", "maybe", nil, false},
		{"Cache.Disk.Persistent", "DGEN_CACHE_PERSISTENT", "2", nil, false},
		{"Cache.Disk.MaxSize", "DGEN_CACHE_MAX_SIZE", "lots", nil, false},
		{"Cache.Disk.Trace", "DGEN_CACHE_TRACE", "loud", nil, false},
		{"Trace", "DGEN_TRACE_CLOCK", "wall", nil, false},
		{"Graphs", "DGEN_OPENCL_COMMAND_BUFFER", "maybe", nil, false},
		{"Graphs", "DGEN_CUDA_GRAPH", "2", nil, false},
		{"Cache.Remote.Unsigned", "DGEN_CACHE_REMOTE_UNSIGNED", "yes", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.field+"/"+tt.env+"="+tt.value, func(t *testing.T) {
			var envErr, cfgErr error
			if tt.env != "" {
				t.Setenv(tt.env, tt.value)
				if tt.env == "DGEN_TRACE_CLOCK" {
					t.Setenv("DGEN_TRACE", "summary")
				}
				ctx, err := rt.Open()
				if err == nil {
					ctx.Close()
					t.Fatalf("Open with %s=%q: no error", tt.env, tt.value)
				}
				envErr = err
				if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.env) || !strings.Contains(err.Error(), "Config."+tt.field) {
					t.Errorf("Open with %s=%q: %v; want an error wrapping ErrInvalidArgument that names the variable and Config.%s", tt.env, tt.value, err, tt.field)
				}
				t.Setenv(tt.env, "")
			}
			if tt.set == nil {
				return
			}
			cc := defaultCacheConfig()
			cfg := rt.Config{Cache: &cc}
			tt.set(&cfg)
			ctx, err := rt.OpenConfig(cfg)
			if err == nil {
				ctx.Close()
				t.Fatalf("OpenConfig with a bad %s: no error", tt.field)
			}
			cfgErr = err
			if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "Config."+tt.field) || (tt.env != "" && !strings.Contains(err.Error(), tt.env)) {
				t.Errorf("OpenConfig with a bad %s: %v; want an error wrapping ErrInvalidArgument that names Config.%s and %s", tt.field, err, tt.field, tt.env)
			}
			if tt.same && envErr != nil && envErr.Error() != cfgErr.Error() {
				t.Errorf("the errors differ:\nfrom the environment: %v\nfrom Config:          %v", envErr, cfgErr)
			}
		})
	}
}

// TestConfigFromEnvChecks: ConfigFromEnv checks what it read as Open
// does, with the same error.
func TestConfigFromEnvChecks(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"DGEN_DEVICE": "0:", "DGEN_CACHE_MAX_SIZE": "-1"}[k] }
	_, err := rt.ConfigFromEnv(getenv)
	if !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "Config.Device (DGEN_DEVICE)") || !strings.Contains(err.Error(), "Config.Cache.Disk.MaxSize (DGEN_CACHE_MAX_SIZE) -1: negative") {
		t.Errorf("ConfigFromEnv: %v; want both settings named", err)
	}
}

// TestPersistentWithoutDir: a persistent cache with no Dir is the user
// cache directory's dgen, as its doc says, with no warning.
func TestPersistentWithoutDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	var warn bytes.Buffer
	ctx, err := rt.OpenConfig(rt.Config{Device: testenv.Device(), Logger: slog.New(slog.NewTextHandler(&warn, nil)),
		Cache: &rt.CacheConfig{Disk: rt.DiskCacheConfig{Persistent: true}}})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	disk := cx(ctx).PersistentCache()
	if want := filepath.Join(home, ".cache", "dgen"); disk.Dir() != want || !disk.Enabled() {
		t.Errorf("cache in %q (enabled %v), want %q", disk.Dir(), disk.Enabled(), want)
	}
	if warn.Len() != 0 {
		t.Errorf("warnings: %s", warn.String())
	}
}

// TestConfigMeansWhatItSays: a zero Config, with DGEN_SYNC_LAUNCHES=1,
// DGEN_PROFILE=1 and DGEN_ALLOC_POLICY=tagged in the environment, opens a
// context that runs unsynchronised, unprofiled, on the full policy: a
// Config is taken literally. Open, which reads the environment, takes all
// three.
func TestConfigMeansWhatItSays(t *testing.T) {
	t.Setenv("DGEN_SYNC_LAUNCHES", "1")
	t.Setenv("DGEN_PROFILE", "1")
	t.Setenv("DGEN_ALLOC_POLICY", "tagged")
	t.Setenv("DGEN_DEVICE", testenv.Device())
	t.Setenv("DGEN_BACKEND", testenv.Backend())
	ctx, err := rt.OpenConfig(rt.Config{})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	c := cx(ctx)
	if c.SyncLaunchesOn() || c.ProfilingOn() || cq(ctx.Queue()).Profiling() || c.AllocTaggedOn() {
		t.Errorf("Config{}: synchronised %v, profiled %v (queue %v), tagged policy %v; want none: the environment has no say",
			c.SyncLaunchesOn(), c.ProfilingOn(), cq(ctx.Queue()).Profiling(), c.AllocTaggedOn())
	}
	env, err := rt.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	e := cx(env)
	if !e.SyncLaunchesOn() || !e.ProfilingOn() || !e.AllocTaggedOn() {
		t.Errorf("Open: synchronised %v, profiled %v, tagged policy %v; want all three from the environment",
			e.SyncLaunchesOn(), e.ProfilingOn(), e.AllocTaggedOn())
	}
}
