package core

// Configuration: what a context opens and how (Config, CacheConfig), read
// from the environment's DGEN_ variables in this file alone
// (ConfigFromEnv, cacheConfigFromEnv), and the checks of build options. Of
// the rest of the core it uses only the errors, the enums and two name
// helpers (tagName, identChar).

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/internal/envconf"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

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

// DiskCacheConfig configures the persistent program cache, a directory of
// program binaries shared by the processes of a machine. `dgen cache`
// lists, checks and clears it.
type DiskCacheConfig struct {
	// Dir is the cache root, created if missing (DGEN_CACHE_DIR, default
	// the user cache directory's dgen).
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

// diskConfig returns d as the persistent cache's configuration, its
// warnings and trace going to log.
func (d DiskCacheConfig) diskConfig(log *slog.Logger) diskcache.Config {
	cfg := diskcache.Config{Dir: d.Dir, Persistent: d.Persistent, MaxSize: d.MaxSize, MaxAge: d.MaxAge,
		EvictionDisabled: d.EvictionDisabled, MinImageSize: d.MinImageSize, MaxImageSize: d.MaxImageSize,
		BuildWait: d.LockWait, Logger: log}
	if d.Trace {
		cfg.Trace = logWriter{log}
	}
	return cfg
}

// diskCacheConfig is the inverse of diskConfig.
func diskCacheConfig(c diskcache.Config) DiskCacheConfig {
	return DiskCacheConfig{Dir: c.Dir, Persistent: c.Persistent, MaxSize: c.MaxSize, MaxAge: c.MaxAge,
		EvictionDisabled: c.EvictionDisabled, MinImageSize: c.MinImageSize, MaxImageSize: c.MaxImageSize,
		LockWait: c.BuildWait, Trace: c.Trace != nil}
}

// logWriter is an io.Writer that logs each line written to it at level
// Info: the trace of the caches, which write whole lines.
type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimRight(string(p), "\n"), "\n") {
		w.l.Info(line)
	}
	return len(p), nil
}

// lineLogger is an io.Writer that logs each line written to it as one
// record at level Info, whatever the pieces it is written in: the trace
// summary and log without a path, whose table writer writes a line a cell
// at a time. Flush logs a last line that no newline ended.
type lineLogger struct {
	l *slog.Logger

	mu      sync.Mutex // guards partial; a log record is made outside it
	partial []byte     // the line written so far
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.partial = append(w.partial, p...)
	i := bytes.LastIndexByte(w.partial, '\n')
	if i < 0 {
		w.mu.Unlock()
		return len(p), nil
	}
	lines := string(w.partial[:i])
	w.partial = append(w.partial[:0], w.partial[i+1:]...)
	w.mu.Unlock()
	for line := range strings.SplitSeq(lines, "\n") {
		w.l.Info(line)
	}
	return len(p), nil
}

// Flush logs the line written since the last newline, if any.
func (w *lineLogger) Flush() {
	w.mu.Lock()
	line := string(w.partial)
	w.partial = w.partial[:0]
	w.mu.Unlock()
	if line != "" {
		w.l.Info(line)
	}
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
	cfg, err := cacheConfigFromEnv(nil)
	if err == nil {
		err = checkRemote(&cfg)
	}
	return cfg, err
}

// defaultCacheConfig returns the configuration of an empty environment:
// in-memory caching on without eviction, and the persistent cache on
// under the user cache directory. In a test binary (inTestBinary) the
// persistent cache is off unless DGEN_CACHE_DIR names a directory, so that
// tests never write to the user's cache.
func defaultCacheConfig() CacheConfig {
	cfg, _ := cacheConfigFromEnv(func(string) string { return "" })
	return cfg
}

// cacheConfigFromEnv returns the cache configuration that the environment
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
func cacheConfigFromEnv(getenv func(string) string) (CacheConfig, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	disk, derr := diskcache.ConfigFromEnv(getenv)
	cfg := CacheConfig{InMemory: true, Disk: diskCacheConfig(disk)}
	var errs []error
	if derr != nil {
		errs = append(errs, derr)
	}
	if v := strings.TrimSpace(getenv("DGEN_CACHE_REMOTE")); v != "" {
		cfg.Remote = RemoteCacheConfig{URL: v, Getenv: getenv}
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

// Config says which backend and devices a context opens, and how. A field
// left at its zero value is filled from its DGEN_ variable when the
// context opens (see ConfigFromEnv); a field that is set wins over its
// variable.
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
	// deviceEnv is the value of DGEN_DEVICE when Device was read from it,
	// so that errors name the variable while Device still holds its value.
	deviceEnv string
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
	// MaxQueueAhead bounds the commands that a queue acquired for a
	// request (Context.AcquireQueueContext) keeps ahead of the host: an
	// enqueue past it waits until the device has completed the oldest, or
	// the request's context is done, so that a cancelled request leaves at
	// most this many of its commands on the device, and a loop of
	// launches needs no pacing of its own. A graph launch counts as one
	// command. 0 means DGEN_QUEUE_AHEAD, else 4.
	MaxQueueAhead int
	// Logger receives the context's warnings (a cache directory that
	// cannot be used, a remote tier that fails, a tuning that cannot be
	// stored, an NVIDIA GPU opened through NVIDIA's OpenCL because rt/cuda
	// is not linked), the cache's trace (DiskCacheConfig.Trace) and the
	// trace summary and log without a path (Trace); nil means
	// slog.Default() at the time of each message.
	Logger *slog.Logger
}

// ConfigFromEnv returns the configuration that the environment asks for,
// reading variables through getenv (os.Getenv if nil): DGEN_DEVICE (a
// selector), DGEN_BACKEND (auto or a registered backend), DGEN_PROFILE
// (1 or 0), DGEN_ALLOC_POLICY (full, tagged or bestfit),
// DGEN_ALLOC_MAX_HELD (a byte count such as 512MiB; 0 for no bound),
// DGEN_QUEUE_AHEAD (a count: see Config.MaxQueueAhead),
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
	return Config{}.withEnv(getenv)
}

// withEnv returns cfg with every field that it leaves at its zero value
// filled from its variable, read through getenv (os.Getenv if nil). This
// is the one place where rt reads its configuration from the environment.
func (cfg Config) withEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(name string, set bool, parse func(v string) error) error {
		v := strings.TrimSpace(getenv(name))
		if set || v == "" {
			return nil
		}
		if err := parse(v); err != nil {
			return fmt.Errorf("%s=%q: %w", name, v, err)
		}
		return nil
	}
	errs := []error{
		env("DGEN_BACKEND", cfg.Backend != BackendAuto, func(v string) error { return cfg.Backend.UnmarshalText([]byte(v)) }),
		env("DGEN_DEVICE", cfg.Device != "", func(v string) error {
			if err := devsel.Check(v); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
			}
			cfg.Device, cfg.deviceEnv = v, v
			return nil
		}),
		env("DGEN_PROFILE", cfg.Profiling, setBool(&cfg.Profiling)),
		env("DGEN_SYNC_LAUNCHES", cfg.SyncLaunches, setBool(&cfg.SyncLaunches)),
		env("DGEN_ALLOC_POLICY", cfg.AllocPolicy != AllocFull, func(v string) error { return cfg.AllocPolicy.UnmarshalText([]byte(v)) }),
		env("DGEN_ALLOC_MAX_HELD", cfg.AllocMaxHeld != 0, func(v string) (err error) {
			cfg.AllocMaxHeld, err = envconf.Size(v)
			return err
		}),
		env("DGEN_QUEUE_AHEAD", cfg.MaxQueueAhead != 0, func(v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return errors.New("want a count of commands, at least 1")
			}
			cfg.MaxQueueAhead = n
			return nil
		}),
		env("DGEN_TUNE", cfg.Retune, func(v string) error {
			b, ok := envconf.Bool(v)
			if strings.EqualFold(v, "force") {
				b, ok = true, true
			}
			if !ok {
				return errors.New("want force (or 1) to re-tune, 0 to use tuning records")
			}
			cfg.Retune = b
			return nil
		}),
		env(trace.EnvVar, cfg.Trace != "" || cfg.Tracer != nil, func(v string) error {
			if _, err := trace.ParseOptions(v); err != nil {
				return err
			}
			cfg.Trace = v
			return nil
		}),
		// DGEN_TRACE_CLOCK=mono is the item clock=mono of a trace spec
		// that names no clock.
		env("DGEN_TRACE_CLOCK", cfg.Trace == "" || strings.Contains(cfg.Trace, "clock="), func(v string) error {
			if v != "mono" && v != "tsc" {
				return errors.New("want mono or tsc")
			}
			cfg.Trace += ",clock=" + v
			return nil
		}),
	}
	if cfg.Cache == nil {
		cc, err := cacheConfigFromEnv(getenv)
		cfg.Cache = &cc
		errs = append(errs, err)
	}
	return cfg, errors.Join(errs...)
}

// setBool returns the parser of a boolean variable that sets *dst.
func setBool(dst *bool) func(v string) error {
	return func(v string) error {
		b, ok := envconf.Bool(v)
		if !ok {
			return errors.New(envconf.BoolSyntax)
		}
		*dst = b
		return nil
	}
}

// graphConfig is what the environment allows command graphs (graph.go)
// to be prepared as, read by every Open and OpenConfig: the device API's
// own graph objects, each unless its variable is 0:
//
//	DGEN_OPENCL_COMMAND_BUFFER  1 or 0 (default 1): OpenCL command buffers (cl_khr_command_buffer)
//	DGEN_CUDA_GRAPH             1 or 0 (default 1): CUDA graphs
//
// Where one is off, or a backend has none, a graph replays as a loop of
// prepared commands, one backend call per launch of the graph.
type graphConfig struct {
	off [driver.CUDAGraph + 1]bool // by driver.NativeGraph
}

// graphEnv names the variable that allows each native graph object.
var graphEnv = [...]string{
	driver.CommandBuffer: "DGEN_OPENCL_COMMAND_BUFFER",
	driver.CUDAGraph:     "DGEN_CUDA_GRAPH",
}

// graphConfigFromEnv reads graphConfig's variables through getenv
// (os.Getenv if nil). A malformed value is an error that names the
// variable.
func graphConfigFromEnv(getenv func(string) string) (graphConfig, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var gc graphConfig
	for k, name := range graphEnv {
		if name == "" {
			continue
		}
		if v := strings.TrimSpace(getenv(name)); v != "" {
			b, ok := envconf.Bool(v)
			if !ok {
				return gc, fmt.Errorf("%s=%q: %s", name, v, envconf.BoolSyntax)
			}
			gc.off[k] = !b
		}
	}
	return gc, nil
}

// graphConfig returns what cfg.Graphs allows, asking the environment
// through getenv (os.Getenv if nil) for GraphsAuto.
func (cfg *Config) graphConfig(getenv func(string) string) (graphConfig, error) {
	var gc graphConfig
	switch cfg.Graphs {
	case GraphsAuto:
		return graphConfigFromEnv(getenv)
	case GraphsNative:
	case GraphsLoop:
		for k := range gc.off {
			gc.off[k] = true
		}
	default:
		_, err := graphModeNames.parse("graph mode", cfg.Graphs.String())
		return gc, err
	}
	return gc, nil
}

// allows reports whether graphs may be prepared as the native object n.
func (gc graphConfig) allows(n driver.NativeGraph) bool {
	return n != driver.NoNativeGraph && int(n) < len(gc.off) && !gc.off[n]
}

// allocConfig returns the allocator configuration of cfg's AllocPolicy
// and AllocMaxHeld.
func (cfg *Config) allocConfig() (alloc.Config, error) {
	var ac alloc.Config
	switch cfg.AllocPolicy {
	case AllocFull:
	case AllocTagged:
		ac = alloc.SeedPolicy()
	case AllocBestFit:
		ac.BestFit = true
	default:
		_, err := allocPolicyNames.parse("allocator policy", cfg.AllocPolicy.String())
		return ac, err
	}
	if cfg.AllocMaxHeld < 0 {
		return ac, fmt.Errorf("allocator bound of %d bytes held: %w: negative", cfg.AllocMaxHeld, ErrInvalidArgument)
	}
	ac.MaxHeld = cfg.AllocMaxHeld
	ac.IsOutOfMemory = isOutOfMemory
	ac.TagName = func(t alloc.Tag) string { return tagName(uint32(t)) }
	return ac, nil
}

// isOutOfMemory reports whether err says that the device or the host ran
// out of memory: the allocator's alloc.Config.IsOutOfMemory.
func isOutOfMemory(err error) bool {
	return errors.Is(err, ErrOutOfMemory) || errors.Is(err, alloc.ErrDeviceOutOfMemory)
}

// checkRemote fails when cfg names a remote tier (DGEN_CACHE_REMOTE) and
// the program has registered none: the tier is opt-in, by a blank import
// of rt/fleetcache, and a configuration that asks for it in a program
// without it is a mistake to report, not to ignore.
//
// A tier that refuses the configuration (rt/fleetcache without
// DGEN_CACHE_REMOTE_KEY or DGEN_CACHE_REMOTE_UNSIGNED=insecure) fails
// Open too, with the tier's error, which says what to set.
func checkRemote(cfg *CacheConfig) error {
	if cfg.Remote.URL == "" {
		return nil
	}
	if !diskcache.RemoteRegistered() {
		return fmt.Errorf("DGEN_CACHE_REMOTE is set: %w", diskcache.ErrNoRemote)
	}
	return diskcache.CheckRemote(diskcache.RemoteConfig{URL: cfg.Remote.URL, Getenv: cfg.Remote.Getenv})
}

// The origins of build options, for checkOptions' errors.
const (
	optionsFromEnv    = "the environment (DGEN_PROGRAM_COMPILE_OPTIONS)"
	optionsFromConfig = "the API (CacheConfig.CompileOptions)"
	optionsFromAPI    = "the API (the options of raw.Build, LoadProgram or ProgramImage)"
)

// clStandards are the values -cl-std= accepts.
var clStandards = []string{"CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"}

// checkOptions checks build options before they reach the driver, which may
// crash on malformed ones (PoCL aborts inside clBuildProgram on a bare -D).
// Options are separated by white space; -D and -I take a value, attached
// or as the next option; -cl-std= names a standard. Other options start with
// a dash and pass unchecked, vendor options among them. An invalid option
// is an error wrapping ErrBuildFailed that says where it came from.
func checkOptions(opts, from string) error {
	f := strings.Fields(opts)
	for i := 0; i < len(f); i++ {
		tok := f[i]
		var msg string
		switch {
		case tok == "-D" || tok == "-I":
			if i+1 == len(f) || strings.HasPrefix(f[i+1], "-") {
				msg = tok + " needs a value"
				break
			}
			i++
			if tok == "-D" {
				msg = checkDefine(f[i])
			}
		case strings.HasPrefix(tok, "-D"):
			msg = checkDefine(tok[2:])
		case strings.HasPrefix(tok, "-cl-std="):
			if v := tok[len("-cl-std="):]; !slices.Contains(clStandards, v) {
				msg = fmt.Sprintf("unknown OpenCL C standard %q (want one of %s)", v, strings.Join(clStandards, ", "))
			}
		case !strings.HasPrefix(tok, "-") || tok == "-":
			msg = "not an option"
		}
		if msg != "" {
			return fmt.Errorf("%w: build options from %s: %q: %s", ErrBuildFailed, from, tok, msg)
		}
	}
	return nil
}

// checkDefine checks the value of -D: a macro name, or a function-like
// macro's name and parameter list (SQ(x), F(a,b), G(), V(a,...)), then
// optionally =value, as every OpenCL compiler takes them.
func checkDefine(def string) string {
	name, params, fn := strings.Cut(def, "(")
	if !fn {
		name, _, _ = strings.Cut(def, "=")
	}
	if name == "" {
		return "-D needs a macro name"
	}
	if !isIdent(name) {
		return fmt.Sprintf("%q is not a macro name", name)
	}
	if !fn {
		return ""
	}
	list, rest, closed := strings.Cut(params, ")")
	if !closed || (rest != "" && rest[0] != '=') {
		return fmt.Sprintf("%q: a function-like macro's parameters are a list of names in parentheses, then =value if any", name+"("+params)
	}
	if list == "" {
		return ""
	}
	ps := strings.Split(list, ",")
	for i, p := range ps {
		if !isIdent(p) && (p != "..." || i != len(ps)-1) {
			return fmt.Sprintf("parameter %q of macro %s is not a name", p, name)
		}
	}
	return ""
}

// isIdent reports whether s is a C identifier.
func isIdent(s string) bool {
	for i, r := range s {
		if !identChar(r, i > 0) {
			return false
		}
	}
	return s != ""
}

// checkImageOptions checks an image's own options, naming their origin.
func checkImageOptions(img *progcache.Image) error {
	from := img.Origin
	if from == "" {
		from = optionsFromAPI
	}
	return checkOptions(img.Options, from)
}
