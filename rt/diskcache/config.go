package diskcache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dgen-go/dgen/internal/envconf"
)

// Default values of the configuration.
const (
	DefaultMaxSize       = 8 << 30 // 8 GiB
	DefaultMaxAge        = 7 * 24 * time.Hour
	DefaultMaxImageSize  = 1 << 30 // 1 GiB
	DefaultBuildWait     = 2 * time.Minute
	defaultSubdirectory  = "dgen"
	environmentVarPrefix = "DGEN_CACHE_"
)

// Config configures a persistent cache. The zero Config is a disabled cache;
// DefaultConfig and ConfigFromEnv return usable ones.
type Config struct {
	// Dir is the cache root. It is created if missing.
	Dir string
	// Persistent enables the cache. A Cache opened with Persistent false
	// stores nothing and misses on every Get, but its management methods
	// (List, Stat, Verify, Clear, GC) still work on Dir.
	Persistent bool
	// MaxSize is the total size in bytes above which the least recently
	// used entries are evicted down to MaxSize/2. Zero turns size-based
	// eviction off.
	MaxSize int64
	// MaxAge is the time after its last access at which an entry is
	// evicted. Zero turns age-based eviction off.
	MaxAge time.Duration
	// EvictionDisabled turns off both size- and age-based eviction,
	// except when GC is called explicitly.
	EvictionDisabled bool
	// MinImageSize is the size in bytes below which a binary is not stored.
	MinImageSize int64
	// MaxImageSize is the size in bytes above which a binary is not
	// stored. Zero means no limit.
	MaxImageSize int64
	// BuildWait is how long GetOrBuild, and Get, wait for another process
	// that holds the key (building or writing it) before they go on
	// without it (DGEN_CACHE_LOCK_TIMEOUT). Zero means DefaultBuildWait.
	BuildWait time.Duration
	// Trace, if not nil, receives one line for every cache decision.
	// Writes to it are serialized.
	Trace io.Writer
	// Warnings, if not nil, receives the one warning that a cache gives
	// when a write shows the disk unusable (full, read-only) and it turns
	// itself off. Open's errors are returned, not written here.
	Warnings io.Writer
	// Remote, if not nil, is the shared tier beneath the cache: a local
	// miss asks it, and what is built or stored is published to it.
	Remote Remote
}

// DefaultConfig returns the default configuration with the given root
// directory: persistent, 8 GiB maximum, 7 days maximum age, binaries up to
// 1 GiB.
func DefaultConfig(dir string) Config {
	return Config{
		Dir:          dir,
		Persistent:   true,
		MaxSize:      DefaultMaxSize,
		MaxAge:       DefaultMaxAge,
		MaxImageSize: DefaultMaxImageSize,
		BuildWait:    DefaultBuildWait,
	}
}

// ConfigFromEnv returns the configuration described by the environment, as
// read through getenv (os.Getenv in a program, a map lookup in a test):
//
//	DGEN_CACHE_DIR               cache root (default: the user cache directory + "/dgen")
//	DGEN_CACHE_PERSISTENT        1/0, true/false, on/off (default on)
//	DGEN_CACHE_MAX_SIZE          bytes, with an optional K, M, G or T suffix
//	                             (powers of 1024; default 8G; 0 turns size eviction off)
//	DGEN_CACHE_THRESHOLD_DAYS    days without access before eviction (default 7; 0 = off)
//	DGEN_CACHE_EVICTION_DISABLE  any value but 0/false/off/no turns eviction off
//	DGEN_CACHE_MIN_IMAGE_SIZE    bytes, suffixes as above (default 0)
//	DGEN_CACHE_MAX_IMAGE_SIZE    bytes, suffixes as above (default 1G; 0 = no limit)
//	DGEN_CACHE_TRACE             1/true/stderr or stdout logs every cache decision
//	                             (default off)
//	DGEN_CACHE_LOCK_TIMEOUT      how long to wait for a key that another process holds,
//	                             a Go duration such as 30s (default 2m); the trace says
//	                             when a wait expires
//
// A malformed value is an error that names the variable and the value; the
// other fields still hold their defaults or parsed values.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := DefaultConfig("")
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var errs []error
	bad := func(name, val, why string) {
		errs = append(errs, fmt.Errorf("diskcache: %s=%q: %s: %w", name, val, why, ErrConfig))
	}
	get := func(name string) (string, string) {
		name = environmentVarPrefix + name
		return name, strings.TrimSpace(getenv(name))
	}

	if name, v := get("DIR"); v != "" {
		cfg.Dir = v
		if !filepath.IsAbs(v) {
			if abs, err := filepath.Abs(v); err == nil {
				cfg.Dir = abs
			} else {
				bad(name, v, err.Error())
			}
		}
	} else if base := userCacheDir(getenv); base != "" {
		cfg.Dir = filepath.Join(base, defaultSubdirectory)
	}
	if name, v := get("PERSISTENT"); v != "" {
		if b, ok := envconf.Bool(v); ok {
			cfg.Persistent = b
		} else {
			bad(name, v, "want 1 or 0")
		}
	}
	if name, v := get("MAX_SIZE"); v != "" {
		if n, err := envconf.Size(v); err == nil {
			cfg.MaxSize = n
		} else {
			bad(name, v, err.Error())
		}
	}
	if name, v := get("THRESHOLD_DAYS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		switch {
		case err != nil || n < 0:
			bad(name, v, "want a number of days, 0 or more")
		case n > 100*365:
			bad(name, v, "more than 100 years")
		default:
			cfg.MaxAge = time.Duration(n) * 24 * time.Hour
		}
	}
	if _, v := get("EVICTION_DISABLE"); v != "" {
		b, ok := envconf.Bool(v)
		cfg.EvictionDisabled = !ok || b
	}
	if name, v := get("MIN_IMAGE_SIZE"); v != "" {
		if n, err := envconf.Size(v); err == nil {
			cfg.MinImageSize = n
		} else {
			bad(name, v, err.Error())
		}
	}
	if name, v := get("MAX_IMAGE_SIZE"); v != "" {
		if n, err := envconf.Size(v); err == nil {
			cfg.MaxImageSize = n
		} else {
			bad(name, v, err.Error())
		}
	}
	if name, v := get("LOCK_TIMEOUT"); v != "" {
		if d, err := envconf.Duration(v); err == nil {
			cfg.BuildWait = d
		} else {
			bad(name, v, err.Error())
		}
	}
	if name, v := get("TRACE"); v != "" {
		switch strings.ToLower(v) {
		case "stdout":
			cfg.Trace = os.Stdout
		case "stderr":
			cfg.Trace = os.Stderr
		default:
			if b, ok := envconf.Bool(v); !ok {
				bad(name, v, "want 1, 0, stderr or stdout")
			} else if b {
				cfg.Trace = os.Stderr
			}
		}
	}
	if len(errs) == 1 {
		return cfg, errs[0]
	}
	if len(errs) > 1 {
		return cfg, errors.Join(errs...)
	}
	return cfg, nil
}

// userCacheDir mirrors os.UserCacheDir but reads the environment through
// getenv. It returns "" when no directory can be determined.
func userCacheDir(getenv func(string) string) string {
	switch runtime.GOOS {
	case "windows":
		return getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches")
		}
		return ""
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib", "cache")
		}
		return ""
	}
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache")
	}
	return ""
}
