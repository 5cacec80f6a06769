package core

// The environment: every variable of the process environment that dgen
// reads, in one table (envVars: name, Config field, default, doc,
// parser), and the only code of the module, tests aside, that reads or
// sets the environment (a test of the module's root checks it). Open
// reads the DGEN_ variables through ConfigFromEnv; OpenConfig reads none
// (a Config means what it says). The few variables of the driver
// libraries that a backend must see as its library sees them are read
// and set here for the backends (driver.InstallLibraryEnv). `dgen env`
// prints the table (rt.EnvVars).

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dgen-go/dgen/internal/envconf"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// EnvVar is one variable of the process environment that dgen reads.
type EnvVar struct {
	// Name is the variable's name, such as "DGEN_DEVICE".
	Name string
	// Field is the Config field that the variable sets, such as
	// "Cache.Disk.MaxSize"; empty for a library's variable.
	Field string
	// Default is what the variable means unset.
	Default string
	// Doc says what the variable does and what it takes. A boolean takes
	// 1, true, on or yes, or 0, false, off or no; a size, a number of
	// bytes with an optional K, M, G or T (powers of 1024); a duration, a
	// Go duration such as 30s.
	Doc string
	// Deprecated, for an old name that is still read, names the variable
	// that replaces it.
	Deprecated string
	// Library, for a variable of a driver library that dgen reads (or
	// sets) as the library does, names the library: Open and OpenConfig
	// read such a variable from the process environment whatever the
	// Config says, since the library reads it there.
	Library string
}

// envVar is a row of the table: the variable, and the parser that sets
// its field of a Config from a value (nil for a library's variable). A
// parser judges the syntax only: check judges the values it can
// represent, as it judges those that Go code gives.
type envVar struct {
	EnvVar
	parse func(c *Config, v string) error
}

// envVars is the table of every variable. ConfigFromEnv reads them in
// this order: DGEN_TRACE_CLOCK after DGEN_TRACE, which it amends.
var envVars = []envVar{
	{EnvVar{Name: "DGEN_BACKEND", Field: "Backend", Default: "auto",
		Doc: "The backend to open: auto, or a registered backend (opencl; cuda, where the program imports rt/cuda or rt/backends). " +
			"auto tries rt/cuda for an NVIDIA GPU where libcuda loads and NVIDIA's OpenCL compiles for it, then opencl; " +
			"P:D selectors are OpenCL's under auto."},
		func(c *Config, v string) error { c.Backend = Backend(v); return nil }},
	{EnvVar{Name: "DGEN_DEVICE", Field: "Device", Default: "the first GPU, else the first CPU device (PoCL)",
		Doc: "A device selector: gpu, cpu or accelerator (the first device of that type); P:D (device D of platform P, as `dgen devices` numbers them); " +
			"P:* (every device of platform P, in one context); gpu:*, cpu:*, accelerator:* (every device of that type on the first platform that has one); " +
			"anything else, the first device whose name, or else whose platform's name, contains it. A selector that picks nothing fails Open (rt.ErrNoDevice)."},
		func(c *Config, v string) error { c.Device = v; return nil }},
	{EnvVar{Name: "DGEN_PROFILE", Field: "Profiling", Default: "0",
		Doc: "A boolean: device timestamps on every queue of the context."},
		boolVar(func(c *Config) *bool { return &c.Profiling })},
	{EnvVar{Name: "DGEN_SYNC_LAUNCHES", Field: "SyncLaunches", Default: "0",
		Doc: "A boolean, for debugging (as CUDA_LAUNCH_BLOCKING is CUDA's): every launch waits until its queue has finished and launches are serialised, " +
			"so that a device fault names the launch and its Go line; on rt/cuda programs carry line information for compute-sanitizer. Never in production."},
		boolVar(func(c *Config) *bool { return &c.SyncLaunches })},
	{EnvVar{Name: "DGEN_ALLOC_POLICY", Field: "AllocPolicy", Default: "full",
		Doc: "The policy of each device's allocator: full (the tagged free list, the untagged size-class pool, release-and-retry on out of memory), " +
			"tagged (the tagged free list only, as Futhark's in 2018) or bestfit (one free list across tags, smallest fitting block first: Futhark's since 2020)."},
		func(c *Config, v string) error { return c.AllocPolicy.UnmarshalText([]byte(v)) }},
	{EnvVar{Name: "DGEN_ALLOC_MAX_HELD", Field: "AllocMaxHeld", Default: "0 (no bound)",
		Doc: "A size: the bytes that one device's allocator may hold in free lists; beyond it the least recently freed blocks go back to the driver."},
		sizeVar(func(c *Config) *int64 { return &c.AllocMaxHeld })},
	{EnvVar{Name: "DGEN_MEMORY_LIMIT", Field: "MemoryLimit", Default: "0 (no limit)",
		Doc: "A size: the bytes of device memory that a context may hold on each of its devices, as GOMEMLIMIT bounds the heap; past it held blocks are returned, " +
			"then allocations fail with rt.ErrMemoryLimit (or wait, in the Context forms)."},
		sizeVar(func(c *Config) *int64 { return &c.MemoryLimit })},
	{EnvVar{Name: "DGEN_QUEUE_AHEAD", Field: "MaxQueueAhead", Default: "4",
		Doc: "A count: the most commands that a queue acquired for a request (Context.AcquireQueueContext) keeps ahead of the host; an enqueue past it waits for the oldest to complete, or for the request's context."},
		func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errors.New("want a count of commands")
			}
			c.MaxQueueAhead = n
			return nil
		}},
	{EnvVar{Name: "DGEN_RETUNE", Field: "Retune", Default: "0",
		Doc: "A boolean: SpecConst.Tune times the candidates again where a tuning record exists, and records the new winner."},
		boolVar(func(c *Config) *bool { return &c.Retune })},
	{EnvVar{Name: "DGEN_TUNE", Field: "Retune", Default: "unset", Deprecated: "DGEN_RETUNE",
		Doc: "The old name of DGEN_RETUNE: force (or a boolean)."},
		func(c *Config, v string) error {
			if strings.EqualFold(v, "force") {
				v = "1"
			}
			return boolVar(func(c *Config) *bool { return &c.Retune })(c, v)
		}},
	{EnvVar{Name: trace.EnvVar, Field: "Trace", Default: "off",
		Doc: "The built-in trace subscribers and device-time sampling, comma-separated: perfetto:PATH, flight:PATH, size=64M, summary[:PATH], log[:PATH], " +
			"device=N|all, clock=mono|tsc (see trace.ParseOptions). A malformed value fails Open."},
		func(c *Config, v string) error { c.Trace = v; return nil }},
	{EnvVar{Name: "DGEN_TRACE_CLOCK", Field: "Trace", Default: "tsc where it is usable",
		Doc: "mono or tsc: the item clock= added to a DGEN_TRACE that names no clock."},
		func(c *Config, v string) error {
			if v != "mono" && v != "tsc" {
				return errors.New("want mono or tsc")
			}
			if c.Trace != "" && !strings.Contains(c.Trace, "clock=") {
				c.Trace += ",clock=" + v
			}
			return nil
		}},
	{EnvVar{Name: "DGEN_GRAPHS", Field: "Graphs", Default: "auto",
		Doc: "What command graphs (Queue.Record) replay as: auto or native, the device API's own graph objects where the backend has them " +
			"(OpenCL command buffers, cl_khr_command_buffer, but for graphs with a sampler argument, which PoCL 3.1's mishandle; CUDA graphs); " +
			"loop, a loop of prepared commands, one backend call per launch."},
		func(c *Config, v string) error { return c.Graphs.UnmarshalText([]byte(strings.ToLower(v))) }},
	{EnvVar{Name: "DGEN_OPENCL_COMMAND_BUFFER", Field: "Graphs", Default: "unset", Deprecated: "DGEN_GRAPHS",
		Doc: "Old: 0 is DGEN_GRAPHS=loop (on every backend), 1 the default."}, oldGraphVar},
	{EnvVar{Name: "DGEN_CUDA_GRAPH", Field: "Graphs", Default: "unset", Deprecated: "DGEN_GRAPHS",
		Doc: "Old: 0 is DGEN_GRAPHS=loop (on every backend), 1 the default."}, oldGraphVar},
	{EnvVar{Name: "DGEN_CUDA_LIBRARY", Field: "CUDALibrary", Default: "libcuda.so.1",
		Doc: "The CUDA driver library that rt/cuda opens: a path, for a driver outside the loader's path. Read when rt/cuda first loads it, once per process."},
		func(c *Config, v string) error { c.CUDALibrary = v; return nil }},
	{EnvVar{Name: "DGEN_CUPTI_LIBRARY", Field: "CUPTILibrary", Default: "libcupti.so, then the CUDA toolkit's under /usr/local/cuda",
		Doc: "On rt/cuda, the CUPTI library that times kernels when tracing reports every command's device times; none: CUDA events time them. Read once per process."},
		func(c *Config, v string) error { c.CUPTILibrary = v; return nil }},

	{EnvVar{Name: "DGEN_CACHE_IN_MEM", Field: "Cache.InMemory", Default: "1",
		Doc: "A boolean: a second build of the same program in a context returns the first."},
		boolVar(func(c *Config) *bool { return &c.Cache.InMemory })},
	{EnvVar{Name: "DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD", Field: "Cache.EvictionThreshold", Default: "0 (never)",
		Doc: "A size: above this total size of program binaries the least recently used programs of a context are evicted, with their kernels."},
		sizeVar(func(c *Config) *int64 { return &c.Cache.EvictionThreshold })},
	{EnvVar{Name: "DGEN_PROGRAM_COMPILE_OPTIONS", Field: "Cache.CompileOptions", Default: "none",
		Doc: "Build options added to every program built, and part of every cache key."},
		func(c *Config, v string) error { c.Cache.CompileOptions = v; return nil }},
	{EnvVar{Name: "DGEN_CACHE_DIR", Field: "Cache.Disk.Dir", Default: "the user cache directory's dgen (~/.cache/dgen)",
		Doc: "The root of the persistent cache, made if missing and marked with a CACHEDIR.TAG; a directory that holds other files is refused. " +
			"A symbolic link to a directory is that directory; a relative one is made absolute at Open. In test binaries the persistent cache is off unless this is set."},
		func(c *Config, v string) error { c.Cache.Disk.Dir, c.Cache.Disk.Persistent = v, true; return nil }},
	{EnvVar{Name: "DGEN_CACHE_PERSISTENT", Field: "Cache.Disk.Persistent", Default: "1 (0 in test binaries without DGEN_CACHE_DIR)",
		Doc: "A boolean: the persistent cache, a directory of program binaries that the processes of a machine share."},
		boolVar(func(c *Config) *bool { return &c.Cache.Disk.Persistent })},
	{EnvVar{Name: "DGEN_CACHE_MAX_SIZE", Field: "Cache.Disk.MaxSize", Default: "8G",
		Doc: "A size: above it the least recently used entries are evicted down to half of it; 0: no bound."},
		sizeVar(func(c *Config) *int64 { return &c.Cache.Disk.MaxSize })},
	{EnvVar{Name: "DGEN_CACHE_MAX_AGE", Field: "Cache.Disk.MaxAge", Default: "7d",
		Doc: "How long after its last access an entry is evicted: a duration (168h) or a number of days (7d); 0: never."},
		func(c *Config, v string) error { return parseAge(&c.Cache.Disk.MaxAge, v) }},
	{EnvVar{Name: "DGEN_CACHE_THRESHOLD_DAYS", Field: "Cache.Disk.MaxAge", Default: "unset", Deprecated: "DGEN_CACHE_MAX_AGE",
		Doc: "The old name of DGEN_CACHE_MAX_AGE, in days: 7 is DGEN_CACHE_MAX_AGE=7d."},
		func(c *Config, v string) error {
			if _, err := strconv.Atoi(v); err != nil {
				return errors.New("want a number of days")
			}
			return parseAge(&c.Cache.Disk.MaxAge, v+"d")
		}},
	{EnvVar{Name: "DGEN_CACHE_EVICTION_DISABLE", Field: "Cache.Disk.EvictionDisabled", Default: "0",
		Doc: "A boolean: no size- or age-based eviction (`dgen cache gc` still evicts)."},
		boolVar(func(c *Config) *bool { return &c.Cache.Disk.EvictionDisabled })},
	{EnvVar{Name: "DGEN_CACHE_MIN_IMAGE_SIZE", Field: "Cache.Disk.MinImageSize", Default: "0",
		Doc: "A size: smaller binaries are not stored."},
		sizeVar(func(c *Config) *int64 { return &c.Cache.Disk.MinImageSize })},
	{EnvVar{Name: "DGEN_CACHE_MAX_IMAGE_SIZE", Field: "Cache.Disk.MaxImageSize", Default: "1G",
		Doc: "A size: larger binaries are not stored; 0: no bound."},
		sizeVar(func(c *Config) *int64 { return &c.Cache.Disk.MaxImageSize })},
	{EnvVar{Name: "DGEN_CACHE_LOCK_TIMEOUT", Field: "Cache.Disk.LockTimeout", Default: "2m",
		Doc: "A duration: how long a build waits for another process that builds or writes the same program; then it builds anyway, and the cache trace says so."},
		durationVar(func(c *Config) *time.Duration { return &c.Cache.Disk.LockTimeout })},
	{EnvVar{Name: "DGEN_CACHE_TRACE", Field: "Cache.Disk.Trace", Default: "0",
		Doc: "A boolean (stderr and stdout are true too): every decision of the caches, the remote tier's included, logged through Config.Logger at level Info."},
		func(c *Config, v string) error {
			if s := strings.ToLower(v); s == "stderr" || s == "stdout" {
				v = "1"
			}
			return boolVar(func(c *Config) *bool { return &c.Cache.Disk.Trace })(c, v)
		}},
	{EnvVar{Name: "DGEN_CACHE_REMOTE", Field: "Cache.Remote.URL", Default: "none",
		Doc: "The shared tier beneath the persistent cache (rt/fleetcache, opt-in by import): redis://[user:pass@]host:port[/db], rediss://…, " +
			"or http(s)://host[:port][/prefix] (bazel-remote's HTTP protocol)."},
		func(c *Config, v string) error { c.Cache.Remote.URL = v; return nil }},
	{EnvVar{Name: "DGEN_CACHE_REMOTE_MODE", Field: "Cache.Remote.Mode", Default: "read_write",
		Doc: "read_write; read (fetch, never publish: a node that runs code but must not supply it); write (publish, never fetch: a node that warms the cache)."},
		func(c *Config, v string) error {
			switch strings.ToLower(v) { // older spellings
			case "rw", "readwrite":
				v = "read_write"
			case "r", "read_only":
				v = "read"
			case "w", "write_only":
				v = "write"
			}
			return c.Cache.Remote.Mode.UnmarshalText([]byte(v))
		}},
	{EnvVar{Name: "DGEN_CACHE_REMOTE_KEY", Field: "Cache.Remote.Key", Default: "none: Open fails unless DGEN_CACHE_REMOTE_UNSIGNED=insecure",
		Doc: "A secret that only the nodes hold: entries are signed with HMAC-SHA-256 under it, and unsigned or wrongly signed ones are ignored."},
		func(c *Config, v string) error { c.Cache.Remote.Key = v; return nil }},
	{EnvVar{Name: "DGEN_CACHE_REMOTE_UNSIGNED", Field: "Cache.Remote.Unsigned", Default: "unset",
		Doc: "insecure, the one value: use the store unsigned, running whatever anyone who can write to it puts there; for a store that only trusted nodes can reach."},
		func(c *Config, v string) error {
			if v != "insecure" {
				return errors.New("the one value is insecure (unset it, and set DGEN_CACHE_REMOTE_KEY, to sign entries)")
			}
			c.Cache.Remote.Unsigned = true
			return nil
		}},
	{EnvVar{Name: "DGEN_CACHE_REMOTE_TIMEOUT", Field: "Cache.Remote.Timeout", Default: "2s",
		Doc: "A duration: the deadline of every request to the remote."},
		durationVar(func(c *Config) *time.Duration { return &c.Cache.Remote.Timeout })},
	{EnvVar{Name: "DGEN_CACHE_REMOTE_LEASE", Field: "Cache.Remote.Lease", Default: "10s",
		Doc: "A duration: how long a builder's claim on a program lasts without renewal, the most that a builder that died costs the processes that wait."},
		durationVar(func(c *Config) *time.Duration { return &c.Cache.Remote.Lease })},

	{EnvVar: EnvVar{Name: "OCL_ICD_VENDORS", Library: "the OpenCL ICD loader", Default: "/etc/OpenCL/vendors",
		Doc: "Where the ICD loader reads its .icd files; rt/cuda reads them too, to find NVIDIA's OpenCL, its compiler."}},
	{EnvVar: EnvVar{Name: "POCL_KERNEL_CACHE", Library: "PoCL", Default: "1",
		Doc: "0 turns PoCL's kernel cache off. PoCL 3.1 then still links each kernel in its cache directory, and processes that load one program at once abort there " +
			"(pocl issues 430 and 1480), so each process gets a directory of its own below POCL_CACHE_DIR, named dgen-*, locked while it lives and removed by a later process."}},
	{EnvVar: EnvVar{Name: "POCL_CACHE_DIR", Library: "PoCL", Default: "the user cache directory's pocl/kcache",
		Doc: "PoCL's cache directory. With POCL_KERNEL_CACHE=0, rt/opencl sets it, while PoCL loads, to a directory of the process's own below it, " +
			"and restores it, so that child processes do not inherit it."}},
}

// EnvVars returns every variable of the process environment that dgen
// reads, in the order ConfigFromEnv reads them: the one table of them,
// which `dgen env` prints.
func EnvVars() []EnvVar {
	out := make([]EnvVar, len(envVars))
	for i, v := range envVars {
		out[i] = v.EnvVar
	}
	return out
}

// lookupVar returns the row of the variable name.
func lookupVar(name string) (envVar, bool) {
	for _, v := range envVars {
		if v.Name == name {
			return v, true
		}
	}
	return envVar{}, false
}

// settingFor names the setting of a Config field in check's errors, with
// the variable that sets it ("" for a field without one). It panics where
// the table lists no variable of a field it names with want: the table
// and the checks cannot drift apart.
func settingFor(field string, want bool) setting {
	for _, v := range envVars {
		if v.Field == field && v.Deprecated == "" {
			return setting{field, v.Name}
		}
	}
	if want {
		panic("core: no variable of Config." + field + " in the table")
	}
	return setting{field, ""}
}

// ConfigFromEnv returns the configuration that the environment asks for,
// reading the DGEN_ variables through getenv (os.Getenv in a program, and
// if nil; a map's lookup in a test), and checks it as Open does: the documented
// defaults, with each variable that is set parsed into the field whose
// doc names it (the cache's defaults are DefaultCacheConfig's; in a test
// binary the persistent cache is off unless DGEN_CACHE_DIR is set). It
// reads the variables of EnvVars, and only them: `dgen env` prints them,
// each with its field, its default and what it takes. A deprecated name
// (DGEN_TUNE, DGEN_CACHE_THRESHOLD_DAYS, DGEN_OPENCL_COMMAND_BUFFER,
// DGEN_CUDA_GRAPH) is read where its replacement is unset, and said once
// through slog.Default(). A malformed value is an error wrapping
// ErrInvalidArgument that names the variable and the field (and, for a
// closed set, the valid values); the other fields still hold their values.
//
// To open as the environment says with some fields of the program's own,
// set them on what ConfigFromEnv returns and call OpenConfig.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	// The defaults, then each variable of the table in order (envVars:
	// DGEN_TRACE_CLOCK amends DGEN_TRACE), then check.
	if getenv == nil {
		getenv = os.Getenv
	}
	cc := defaultCacheConfig()
	cfg := Config{Cache: &cc}
	var errs []error
	for _, v := range envVars {
		if v.parse == nil {
			continue
		}
		s := strings.TrimSpace(getenv(v.Name))
		if v.Name == "DGEN_CACHE_REMOTE_KEY" {
			s = getenv(v.Name) // a secret, as given
		}
		if s == "" {
			continue
		}
		if v.Deprecated != "" {
			ignored := strings.TrimSpace(getenv(v.Deprecated)) != ""
			warnDeprecated(v.Name, v.Deprecated, ignored)
			if ignored {
				continue
			}
		}
		if err := v.parse(&cfg, s); err != nil {
			errs = append(errs, v.bad(s, err))
		}
	}
	if inTestBinary() && strings.TrimSpace(getenv("DGEN_CACHE_DIR")) == "" {
		cc.Disk.Persistent = false // tests never write to the user's cache
	}
	if len(errs) == 0 {
		errs = append(errs, cfg.check())
	}
	return cfg, errors.Join(errs...)
}

// bad returns the error of a malformed value of the variable.
func (v envVar) bad(value string, err error) error {
	if errors.Is(err, ErrInvalidArgument) {
		return fmt.Errorf("%s=%q (Config.%s): %w", v.Name, value, v.Field, err)
	}
	return fmt.Errorf("%w: %s=%q (Config.%s): %v", ErrInvalidArgument, v.Name, value, v.Field, err)
}

// deprecatedSaid holds the deprecated names said once.
var deprecatedSaid sync.Map

// warnDeprecated says once per process, through slog.Default() (the
// environment is read before any Config.Logger), that the variable old is
// deprecated for its replacement, and whether it was ignored because the
// replacement is set too.
func warnDeprecated(old, replacement string, ignored bool) {
	if _, said := deprecatedSaid.LoadOrStore(old, true); said {
		return
	}
	msg := "dgen: " + old + " is deprecated: set " + replacement
	if ignored {
		msg += " (set too, it wins: " + old + " is ignored)"
	}
	slog.Warn(msg)
}

// boolVar returns the parser of a boolean field.
func boolVar(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, ok := envconf.Bool(v)
		if !ok {
			return errors.New(envconf.BoolSyntax)
		}
		*field(c) = b
		return nil
	}
}

// sizeVar returns the parser of a size field.
func sizeVar(field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := envconf.Size(v)
		if err == nil {
			*field(c) = n
		}
		return err
	}
}

// durationVar returns the parser of a duration field ("0" is zero).
func durationVar(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "0" {
			*field(c) = 0
			return nil
		}
		d, err := envconf.Duration(v)
		if err == nil {
			*field(c) = d
		}
		return err
	}
}

// parseAge parses an age: a duration, or a number of days with the
// suffix d; 0 is zero.
func parseAge(dst *time.Duration, v string) error {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n > 100*365 || n < -100*365 {
			return errors.New("want a duration (168h) or a number of days up to 100 years (7d)")
		}
		*dst = time.Duration(n) * 24 * time.Hour
		return nil
	}
	return durationVar(func(*Config) *time.Duration { return dst })(nil, v)
}

// oldGraphVar parses DGEN_OPENCL_COMMAND_BUFFER and DGEN_CUDA_GRAPH: 0 is
// DGEN_GRAPHS=loop.
func oldGraphVar(c *Config, v string) error {
	b, ok := envconf.Bool(v)
	if !ok {
		return errors.New(envconf.BoolSyntax)
	}
	if !b {
		c.Graphs = GraphsLoop
	}
	return nil
}

// DefaultCacheConfig returns the cache configuration that a Config
// without a Cache means: the documented default of every field (in-memory
// caching on without eviction, the persistent cache on under the user
// cache directory with its bounds, no remote tier). In a test binary the
// persistent cache is off, so that tests never write to the user's cache.
// Change what you need of it and set Config.Cache to it.
func DefaultCacheConfig() CacheConfig { return defaultCacheConfig() }

// defaultCacheConfig returns the documented defaults of the cache, which a
// Config with no Cache means: in-memory caching on without eviction, and
// the persistent cache on, under the user cache directory, with its
// bounds. In a test binary (inTestBinary) the persistent cache is off, so
// that tests never write to the user's cache.
func defaultCacheConfig() CacheConfig {
	return CacheConfig{InMemory: true, Disk: diskCacheConfig(diskcache.DefaultConfig(""))}.forTests()
}

// forTests turns the persistent cache off in a test binary.
func (cc CacheConfig) forTests() CacheConfig {
	if inTestBinary() {
		cc.Disk.Persistent = false
	}
	return cc
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

// The backends read and set the variables of their libraries through
// these (driver.LibraryEnv, driver.SetLibraryEnv), which refuse a name
// that the table does not list as a library's.
func init() { driver.InstallLibraryEnv(libraryGetenv, librarySetenv) }

// libraryGetenv returns the value of a library's variable.
func libraryGetenv(name string) string {
	mustBeLibraryVar(name)
	return os.Getenv(name)
}

// librarySetenv sets a library's variable and returns the function that
// restores it as it was, unset included.
func librarySetenv(name, value string) (restore func()) {
	mustBeLibraryVar(name)
	orig, had := os.LookupEnv(name)
	os.Setenv(name, value)
	return func() {
		if had {
			os.Setenv(name, orig)
		} else {
			os.Unsetenv(name)
		}
	}
}

// mustBeLibraryVar panics where name is not a library's variable of the
// table: a backend that reads another is a bug that the table must show.
func mustBeLibraryVar(name string) {
	if v, ok := lookupVar(name); !ok || v.Library == "" {
		panic("core: a backend reads " + name + ", which the table of variables (env.go) does not list as a library's")
	}
}
