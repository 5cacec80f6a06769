package rt

import (
	"log/slog"
	"time"

	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/trace"
)

// Config says which backend and devices a context opens, and how. It
// means what it says: OpenConfig reads no DGEN_ variable, and the zero
// Config is the documented defaults (as the zero http.Server or
// slog.HandlerOptions is), whatever the environment holds. Open reads the
// environment (ConfigFromEnv), where each field's variable, named in its
// doc, sets it. Every setting is checked once, whichever it came from: a
// bad value (a selector that is not one, a negative size) fails Open with
// an error wrapping ErrInvalidArgument that names the field and its
// variable, the same error from Go code as from the environment.
type Config struct {
	// Backend is the backend to open (DGEN_BACKEND); BackendAuto chooses
	// one: rt/cuda for an NVIDIA GPU when it is imported (rt/backends)
	// and libcuda loads, else rt/opencl.
	Backend Backend
	// Device is a device selector (DGEN_DEVICE):
	//
	//	""              the first GPU, else the first CPU device, else the first device
	//	gpu, cpu, accelerator
	//	                the first device of that type
	//	P:D             device D of platform P (indices from 0, as `dgen devices` prints)
	//	P:*             every device of platform P, in one context
	//	gpu:*, cpu:*, accelerator:*
	//	                every device of that type on the first platform that
	//	                has one, in one context
	//	anything else   the first device whose name, or else whose platform's
	//	                name, contains it (case-insensitive)
	//
	// A selector that picks nothing fails Open with an error wrapping
	// ErrNoDevice.
	Device string
	// Profiling turns on device timestamps for every queue of the context
	// (DGEN_PROFILE). Tracing (Trace or Tracer set) with device-time
	// sampling turns it on too.
	Profiling bool
	// Retune makes SpecConst.Tune time the candidates even where a tuning
	// record exists, and record the new winner (DGEN_RETUNE=1).
	Retune bool
	// SyncLaunches is a debugging setting (DGEN_SYNC_LAUNCHES=1), as
	// CUDA_LAUNCH_BLOCKING is CUDA's: every kernel launch (and graph
	// launch) of the context waits until its queue has finished, and
	// launches are serialised across the context's queues, so that one
	// kernel at a time runs and a device fault names the launch that
	// faulted, with the Go line that enqueued it (DeviceFault). On rt/cuda
	// programs are also built with line information (-nv-line-info), so
	// that compute-sanitizer names the .cl line of a faulting access. It
	// costs a wait for the device after every launch: never set it in
	// production.
	SyncLaunches bool
	// AllocPolicy is the policy of each device's allocator (AllocSite.Alloc
	// and Alloc; DGEN_ALLOC_POLICY).
	AllocPolicy AllocPolicy
	// AllocMaxHeld, when positive, bounds the bytes that one device's
	// allocator holds in free lists; beyond it the least recently freed
	// blocks are released to the driver (DGEN_ALLOC_MAX_HELD).
	AllocMaxHeld int64
	// Trace selects the built-in trace subscribers and the device-time
	// sampling, in the form of DGEN_TRACE (see trace.ParseOptions):
	// "perfetto:PATH", "summary", "log", "device=16", "clock=mono",
	// comma-separated (in the environment, DGEN_TRACE_CLOCK=mono adds
	// clock=mono where DGEN_TRACE names no clock).
	// Empty means none. It is ignored when Tracer is set. The summary and
	// log subscribers without a path write through Logger, one Info
	// record a line.
	Trace string
	// Tracer, if set, is the tracer the context reports to, with the
	// subscribers Go code gave it; the context does not close it.
	Tracer *trace.Tracer
	// Cache configures the kernel/program cache; nil means the defaults,
	// DefaultCacheConfig.
	Cache *CacheConfig
	// Graphs says what command graphs (Queue.Record) are prepared as
	// (DGEN_GRAPHS): the device API's own graph objects where the backend
	// has them (GraphsAuto, the zero value), or a loop of prepared
	// commands (GraphsLoop).
	Graphs GraphMode
	// QueuePool bounds the queues of the context's pool
	// (Context.AcquireQueue), which makes them as requests need them: 0
	// means GOMAXPROCS at Open, and at least 16, since a goroutine that
	// waits for the device holds no P.
	QueuePool int
	// Logger receives the context's warnings (a cache directory that
	// cannot be used, a remote tier that fails, a tuning that cannot be
	// stored, an NVIDIA GPU opened through NVIDIA's OpenCL because rt/cuda
	// is not linked), the cache's trace (DiskCacheConfig.Trace) and the
	// trace summary and log without a path (Trace); nil means
	// slog.Default() at the time of each message.
	Logger *slog.Logger
	// CUDALibrary is the CUDA driver library that rt/cuda opens
	// (DGEN_CUDA_LIBRARY): a path, for a driver outside the loader's path;
	// empty means libcuda.so.1. rt/cuda loads it once per process, at the
	// first Open that asks it for devices, which decides.
	CUDALibrary string
	// CUPTILibrary is the CUPTI library with which rt/cuda times kernels
	// when tracing reports every command's device times
	// (DGEN_CUPTI_LIBRARY): empty means the loader's libcupti.so, then the
	// CUDA toolkit's; "none" means CUDA events time them. Loaded once per
	// process, as CUDALibrary is.
	CUPTILibrary string
}

// core returns c as the core takes it.
func (c Config) core() core.Config {
	cc := core.Config{Backend: core.Backend(c.Backend), Device: c.Device, Profiling: c.Profiling, Retune: c.Retune, SyncLaunches: c.SyncLaunches,
		AllocPolicy: core.AllocPolicy(c.AllocPolicy), AllocMaxHeld: c.AllocMaxHeld, Trace: c.Trace, Tracer: c.Tracer,
		Graphs: core.GraphMode(c.Graphs), QueuePool: c.QueuePool, Logger: c.Logger, CUDALibrary: c.CUDALibrary, CUPTILibrary: c.CUPTILibrary}
	if c.Cache != nil {
		cache := c.Cache.core()
		cc.Cache = &cache
	}
	return cc
}

// config returns the Config of c.
func config(c core.Config) Config {
	cfg := Config{Backend: Backend(c.Backend), Device: c.Device, Profiling: c.Profiling, Retune: c.Retune, SyncLaunches: c.SyncLaunches,
		AllocPolicy: AllocPolicy(c.AllocPolicy), AllocMaxHeld: c.AllocMaxHeld, Trace: c.Trace, Tracer: c.Tracer,
		Graphs: GraphMode(c.Graphs), QueuePool: c.QueuePool, Logger: c.Logger, CUDALibrary: c.CUDALibrary, CUPTILibrary: c.CUPTILibrary}
	if c.Cache != nil {
		cache := cacheConfig(*c.Cache)
		cfg.Cache = &cache
	}
	return cfg
}

// cacheConfig returns the CacheConfig of c.
func cacheConfig(c core.CacheConfig) CacheConfig {
	r := c.Remote
	return CacheConfig{InMemory: c.InMemory, EvictionThreshold: c.EvictionThreshold, CompileOptions: c.CompileOptions,
		Disk: DiskCacheConfig(c.Disk), Remote: RemoteCacheConfig{URL: r.URL, Mode: RemoteMode(r.Mode), Key: r.Key,
			Unsigned: r.Unsigned, Timeout: r.Timeout, Lease: r.Lease}}
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
	c, err := core.ConfigFromEnv(getenv)
	return config(c), err
}

// DefaultCacheConfig returns the cache configuration that a Config
// without a Cache means: the documented default of every field (in-memory
// caching on without eviction, the persistent cache on under the user
// cache directory with its bounds, no remote tier). In a test binary the
// persistent cache is off, so that tests never write to the user's cache.
// Change what you need of it and set Config.Cache to it.
func DefaultCacheConfig() CacheConfig { return cacheConfig(core.DefaultCacheConfig()) }

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

// EnvVars returns every variable of the process environment that dgen
// reads, in the order ConfigFromEnv reads them: the one table of them,
// which `dgen env` prints.
func EnvVars() []EnvVar {
	vs := core.EnvVars()
	out := make([]EnvVar, len(vs))
	for i, v := range vs {
		out[i] = EnvVar(v)
	}
	return out
}

// CacheConfig configures a context's kernel/program cache: the in-memory
// level, the persistent level beneath it and the shared remote tier
// beneath that.
type CacheConfig struct {
	// InMemory keeps built programs in the context so that a second
	// build of the same program (rt/raw's Build or BuildGenerated) returns the first
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
	// DGEN_CACHE_ variables). Disk.Persistent false turns it off; the zero
	// DiskCacheConfig is off.
	Disk DiskCacheConfig
	// Remote configures the shared tier beneath the persistent cache
	// (DGEN_CACHE_REMOTE). An empty Remote.URL turns it off.
	Remote RemoteCacheConfig
}

// core returns c as the core takes it.
func (c *CacheConfig) core() core.CacheConfig {
	r := c.Remote
	return core.CacheConfig{InMemory: c.InMemory, EvictionThreshold: c.EvictionThreshold, CompileOptions: c.CompileOptions,
		Disk: core.DiskCacheConfig(c.Disk), Remote: core.RemoteCacheConfig{URL: r.URL, Mode: core.RemoteMode(r.Mode), Key: r.Key,
			Unsigned: r.Unsigned, Timeout: r.Timeout, Lease: r.Lease}}
}

// DiskCacheConfig configures the persistent program cache, a directory of
// program binaries shared by the processes of a machine. `dgen cache`
// lists, checks and clears it. Each field means what it says, zero
// included (MaxSize 0 is no bound): DefaultCacheConfig's Disk has the
// documented defaults.
type DiskCacheConfig struct {
	// Dir is the cache root, created if missing (DGEN_CACHE_DIR); empty
	// means the user cache directory's dgen (os.UserCacheDir). A relative
	// directory is made absolute when the context opens, so that a later
	// chdir does not move the cache. A root removed while the context runs
	// is made again at the next store; something else put in its place is
	// used only if the cache may write there (a dgen cache directory, or
	// an empty one), else the cache turns off: each once said through
	// Config.Logger.
	Dir string
	// Persistent turns the cache on (DGEN_CACHE_PERSISTENT, default on
	// except in test binaries, where DGEN_CACHE_DIR must name a directory).
	Persistent bool
	// MaxSize is the total size in bytes above which the least recently
	// used entries are evicted down to half of it; 0 turns size-based
	// eviction off (DGEN_CACHE_MAX_SIZE, default 8 GiB).
	MaxSize int64
	// MaxAge is the time after its last access at which an entry is
	// evicted; 0 turns age-based eviction off (DGEN_CACHE_MAX_AGE, default
	// 7 days).
	MaxAge time.Duration
	// EvictionDisabled turns size- and age-based eviction off
	// (DGEN_CACHE_EVICTION_DISABLE).
	EvictionDisabled bool
	// MinImageSize and MaxImageSize bound the size in bytes of the
	// binaries stored; MaxImageSize 0 means no bound
	// (DGEN_CACHE_MIN_IMAGE_SIZE, default 0; DGEN_CACHE_MAX_IMAGE_SIZE,
	// default 1 GiB).
	MinImageSize, MaxImageSize int64
	// LockTimeout is how long a build waits for another process that is
	// building or writing the same program before it goes on without it;
	// 0 means 2 minutes (DGEN_CACHE_LOCK_TIMEOUT, default 2 minutes).
	LockTimeout time.Duration
	// Trace logs every cache decision, and the remote tier's, through
	// Config.Logger at level Info (DGEN_CACHE_TRACE).
	Trace bool
}

// RemoteCacheConfig configures the shared tier beneath the persistent
// cache, a store that the machines of a fleet share. The tier is opt-in: a
// program that sets URL must import rt/fleetcache
// (import _ "github.com/dgen-go/dgen/rt/fleetcache"), else Open fails.
type RemoteCacheConfig struct {
	// URL names the store: redis://HOST:PORT or http(s)://HOST/PATH
	// (DGEN_CACHE_REMOTE); empty means no remote tier.
	URL string
	// Mode is the direction of transfers (DGEN_CACHE_REMOTE_MODE, default
	// RemoteReadWrite).
	Mode RemoteMode
	// Key is a secret that only the nodes hold: entries are signed with
	// HMAC-SHA-256 under it, and unsigned or wrongly signed ones are
	// ignored (DGEN_CACHE_REMOTE_KEY). Without a Key, Open fails unless
	// Unsigned is set.
	Key string
	// Unsigned uses the store without a Key, running whatever anyone who
	// can write to it puts there: for a store that only trusted nodes can
	// reach (DGEN_CACHE_REMOTE_UNSIGNED=insecure).
	Unsigned bool
	// Timeout bounds every request to the store; 0 means 2 seconds
	// (DGEN_CACHE_REMOTE_TIMEOUT).
	Timeout time.Duration
	// Lease is how long a builder's claim on a program lasts without
	// renewal, the most that a builder that died costs the processes that
	// wait; 0 means 10 seconds (DGEN_CACHE_REMOTE_LEASE).
	Lease time.Duration
}
