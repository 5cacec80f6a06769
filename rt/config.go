package rt

import (
	"log/slog"
	"time"

	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/trace"
)

// Config says which backend and devices a context opens, and how. A field
// left at its zero value is filled from its DGEN_ variable when the
// context opens (see ConfigFromEnv); a field that is set wins over its
// variable. Open checks every setting once, whichever it came from: a bad
// value (a selector that is not one, a negative size) fails it with an
// error wrapping ErrInvalidArgument that names the field and its
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
	// record exists, and record the new winner (DGEN_TUNE=force).
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
	// comma-separated (DGEN_TRACE_CLOCK=mono adds clock=mono where it
	// names no clock).
	// Empty means none. It is ignored when Tracer is set. The summary and
	// log subscribers without a path write through Logger, one Info
	// record a line.
	Trace string
	// Tracer, if set, is the tracer the context reports to, with the
	// subscribers Go code gave it; the context does not close it.
	Tracer *trace.Tracer
	// Cache configures the kernel/program cache; nil means what the
	// environment asks for (the cache variables of ConfigFromEnv).
	Cache *CacheConfig
	// Graphs says what command graphs (Queue.Record) are prepared as:
	// GraphsAuto (the zero value) asks DGEN_OPENCL_COMMAND_BUFFER and
	// DGEN_CUDA_GRAPH, GraphsNative and GraphsLoop do not.
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
}

// core returns c as the core takes it.
func (c Config) core() core.Config {
	cc := core.Config{Backend: core.Backend(c.Backend), Device: c.Device, Profiling: c.Profiling, Retune: c.Retune, SyncLaunches: c.SyncLaunches,
		AllocPolicy: core.AllocPolicy(c.AllocPolicy), AllocMaxHeld: c.AllocMaxHeld, Trace: c.Trace, Tracer: c.Tracer,
		Graphs: core.GraphMode(c.Graphs), QueuePool: c.QueuePool, Logger: c.Logger}
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
		Graphs: GraphMode(c.Graphs), QueuePool: c.QueuePool, Logger: c.Logger}
	if c.Cache != nil {
		cfg.Cache = &CacheConfig{InMemory: c.Cache.InMemory, EvictionThreshold: c.Cache.EvictionThreshold,
			CompileOptions: c.Cache.CompileOptions, Disk: DiskCacheConfig(c.Cache.Disk), Remote: RemoteCacheConfig(c.Cache.Remote)}
	}
	return cfg
}

// ConfigFromEnv returns the configuration that the environment asks for,
// reading variables through getenv (os.Getenv if nil): DGEN_DEVICE (a
// selector), DGEN_BACKEND (auto or a registered backend), DGEN_PROFILE
// (1 or 0), DGEN_ALLOC_POLICY (full, tagged or bestfit),
// DGEN_ALLOC_MAX_HELD (a byte count such as 512MiB; 0 for no bound),
// DGEN_TRACE (see Config.Trace), DGEN_TUNE (force, or a boolean: see
// Config.Retune), DGEN_SYNC_LAUNCHES (1 or 0: see Config.SyncLaunches) and
// the cache variables:
//
//	DGEN_CACHE_IN_MEM                     1 or 0 (default 1)
//	DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD  bytes, K/M/G/T suffix allowed (default 0: off)
//	DGEN_PROGRAM_COMPILE_OPTIONS          extra build options (default none)
//	DGEN_CACHE_REMOTE                     the shared tier's store (rt/fleetcache, opt-in)
//
// and those of DiskCacheConfig's fields (DGEN_CACHE_DIR, DGEN_CACHE_PERSISTENT,
// ...). In a test binary the persistent cache is off unless DGEN_CACHE_DIR
// names a directory. A malformed value is an error that names the variable
// and, for a closed set, its valid values.
//
// With Config.Graphs left at GraphsAuto, Open and OpenConfig also read the
// variables that allow command graphs (Queue.Record) to use the device
// API's own graph objects:
//
//	DGEN_OPENCL_COMMAND_BUFFER            1 or 0 (default 1): OpenCL command buffers
//	DGEN_CUDA_GRAPH                       1 or 0 (default 1): CUDA graphs
//
// With one at 0, graphs on that backend replay as a loop of prepared
// commands, one backend call per launch.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c, err := core.ConfigFromEnv(getenv)
	return config(c), err
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
	// DGEN_CACHE_ variables). Disk.Persistent false turns it off.
	Disk DiskCacheConfig
	// Remote configures the shared tier beneath the persistent cache
	// (DGEN_CACHE_REMOTE). An empty Remote.URL turns it off.
	Remote RemoteCacheConfig
}

// core returns c as the core takes it.
func (c *CacheConfig) core() core.CacheConfig {
	return core.CacheConfig{InMemory: c.InMemory, EvictionThreshold: c.EvictionThreshold, CompileOptions: c.CompileOptions,
		Disk: core.DiskCacheConfig(c.Disk), Remote: core.RemoteCacheConfig(c.Remote)}
}

// DiskCacheConfig configures the persistent program cache, a directory of
// program binaries shared by the processes of a machine. `dgen cache`
// lists, checks and clears it.
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
	// evicted; 0 turns age-based eviction off (DGEN_CACHE_THRESHOLD_DAYS,
	// default 7 days).
	MaxAge time.Duration
	// EvictionDisabled turns size- and age-based eviction off
	// (DGEN_CACHE_EVICTION_DISABLE).
	EvictionDisabled bool
	// MinImageSize and MaxImageSize bound the size in bytes of the
	// binaries stored; MaxImageSize 0 means no bound
	// (DGEN_CACHE_MIN_IMAGE_SIZE, default 0; DGEN_CACHE_MAX_IMAGE_SIZE,
	// default 1 GiB).
	MinImageSize, MaxImageSize int64
	// LockWait is how long a build waits for another process that is
	// building or writing the same program before it goes on without it;
	// 0 means 2 minutes (DGEN_CACHE_LOCK_TIMEOUT).
	LockWait time.Duration
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
	// Getenv reads the tier's other settings (DGEN_CACHE_REMOTE_MODE,
	// DGEN_CACHE_REMOTE_KEY, DGEN_CACHE_REMOTE_TIMEOUT and
	// DGEN_CACHE_REMOTE_LEASE: see rt/fleetcache); nil means os.Getenv.
	Getenv func(string) string
}
