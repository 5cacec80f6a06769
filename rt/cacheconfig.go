package rt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/dgen-go/dgen/internal/envconf"
	"github.com/dgen-go/dgen/rt/diskcache"
)

// CacheConfig configures a context's kernel/program cache: the in-memory
// level and the persistent level beneath it (package rt/diskcache).
type CacheConfig struct {
	// InMemory keeps built programs in the context so that a second
	// BuildProgram or Program.Build of the same program returns the first
	// (DGEN_CACHE_IN_MEM, default true). The kernels of generated kernel
	// specs keep their program in any case.
	InMemory bool
	// EvictionThreshold is the total size in bytes of program binaries
	// above which the least recently used programs are evicted, with their
	// kernels (DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD, default 0: never).
	EvictionThreshold int64
	// CompileOptions are appended to the options of every program built
	// (DGEN_PROGRAM_COMPILE_OPTIONS) and are part of every cache key.
	CompileOptions string
	// Disk configures the persistent cache (DGEN_CACHE_DIR and the other
	// DGEN_CACHE_ variables). Disk.Persistent false turns it off.
	Disk diskcache.Config
	// Remote configures the shared tier beneath the persistent cache
	// (DGEN_CACHE_REMOTE; the tier reads its other DGEN_CACHE_REMOTE_
	// variables through Remote.Getenv). An empty Remote.URL turns it off.
	// The tier is opt-in: a program that sets Remote.URL must import
	// rt/fleetcache (import _ "github.com/dgen-go/dgen/rt/fleetcache"),
	// else Open fails. The context fills in Remote.Warnings, Trace and
	// Events where they are nil.
	Remote diskcache.RemoteConfig
	// Warnings receives the one warning a context gives when its cache
	// directory cannot be used; nil means os.Stderr.
	Warnings io.Writer
}

// resolveCacheConfig returns *cc, or the environment's configuration
// when cc is nil.
func resolveCacheConfig(cc *CacheConfig) (CacheConfig, error) {
	if cc != nil {
		if err := checkRemote(cc); err != nil {
			return *cc, err
		}
		return *cc, checkOptions(cc.CompileOptions, optionsFromConfig)
	}
	cfg, err := CacheConfigFromEnv(nil)
	if err == nil {
		err = checkRemote(&cfg)
	}
	return cfg, err
}

// DefaultCacheConfig returns the configuration of an empty environment:
// in-memory caching on without eviction, and the persistent cache on
// under the user cache directory. In a test binary (inTestBinary) the
// persistent cache is off unless DGEN_CACHE_DIR names a directory, so that
// tests never write to the user's cache.
func DefaultCacheConfig() CacheConfig {
	cfg, _ := CacheConfigFromEnv(func(string) string { return "" })
	return cfg
}

// CacheConfigFromEnv returns the cache configuration that the environment
// asks for, reading variables through getenv (os.Getenv if nil):
//
//	DGEN_CACHE_IN_MEM                     1 or 0 (default 1)
//	DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD  bytes, K/M/G/T suffix allowed (default 0: off)
//	DGEN_PROGRAM_COMPILE_OPTIONS          extra build options (default none)
//
// and the variables of diskcache.ConfigFromEnv (DGEN_CACHE_DIR,
// DGEN_CACHE_PERSISTENT, DGEN_CACHE_MAX_SIZE, DGEN_CACHE_THRESHOLD_DAYS,
// DGEN_CACHE_EVICTION_DISABLE, DGEN_CACHE_MIN_IMAGE_SIZE,
// DGEN_CACHE_MAX_IMAGE_SIZE, DGEN_CACHE_TRACE) and DGEN_CACHE_REMOTE, the
// remote tier's store, whose other variables the tier reads when it opens
// (rt/fleetcache: DGEN_CACHE_REMOTE_MODE, DGEN_CACHE_REMOTE_KEY,
// DGEN_CACHE_REMOTE_TIMEOUT, DGEN_CACHE_REMOTE_LEASE).
// A malformed value is an error that names the variable.
func CacheConfigFromEnv(getenv func(string) string) (CacheConfig, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	disk, derr := diskcache.ConfigFromEnv(getenv)
	cfg := CacheConfig{InMemory: true, Disk: disk}
	var errs []error
	if derr != nil {
		errs = append(errs, derr)
	}
	if v := strings.TrimSpace(getenv("DGEN_CACHE_REMOTE")); v != "" {
		cfg.Remote = diskcache.RemoteConfig{URL: v, Getenv: getenv}
	}
	if inTestBinary() && strings.TrimSpace(getenv("DGEN_CACHE_DIR")) == "" {
		cfg.Disk.Persistent = false
	}
	if v := strings.TrimSpace(getenv("DGEN_CACHE_IN_MEM")); v != "" {
		b, ok := envconf.Bool(v)
		if !ok {
			errs = append(errs, fmt.Errorf("DGEN_CACHE_IN_MEM=%q: %s", v, envconf.BoolSyntax))
		}
		cfg.InMemory = b || !ok
	}
	if v := strings.TrimSpace(getenv("DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD")); v != "" {
		n, err := envconf.Size(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD=%q: %v", v, err))
		}
		cfg.EvictionThreshold = n
	}
	cfg.CompileOptions = strings.TrimSpace(getenv("DGEN_PROGRAM_COMPILE_OPTIONS"))
	if err := checkOptions(cfg.CompileOptions, optionsFromEnv); err != nil {
		errs = append(errs, err)
	}
	return cfg, errors.Join(errs...)
}

// inTestBinary reports whether the program is a test binary built by go
// test, without importing testing or flag into applications: go test
// records the package path with a ".test" suffix in the binary's build
// information. It gives the same answer during package initialization as
// later (testing registers its flags only once main runs).
var inTestBinary = sync.OnceValue(func() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && strings.HasSuffix(bi.Path, ".test")
})
