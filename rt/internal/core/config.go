package core

// Configuration: what a context opens and how (Config, CacheConfig), the
// one check of every setting, whichever it came from (check), and the
// checks of build options. The environment is env.go's. Of the rest of
// the core it uses only the errors, the enums and two name helpers
// (tagName, identChar).

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dgen-go/dgen/internal/devsel"
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
	// DGEN_CACHE_ variables). Disk.Persistent false turns it off; the zero
	// DiskCacheConfig is off.
	Disk DiskCacheConfig
	// Remote configures the shared tier beneath the persistent cache
	// (DGEN_CACHE_REMOTE). An empty Remote.URL turns it off.
	Remote RemoteCacheConfig
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

// remoteConfig returns r as the persistent cache's remote configuration.
func (r RemoteCacheConfig) remoteConfig() diskcache.RemoteConfig {
	return diskcache.RemoteConfig{URL: r.URL, Mode: r.Mode.String(), Key: r.Key, Unsigned: r.Unsigned, Timeout: r.Timeout, Lease: r.Lease}
}

// diskConfig returns d as the persistent cache's configuration, its
// warnings and trace going to log.
func (d DiskCacheConfig) diskConfig(log *slog.Logger) diskcache.Config {
	cfg := diskcache.Config{Dir: d.Dir, Persistent: d.Persistent, MaxSize: d.MaxSize, MaxAge: d.MaxAge,
		EvictionDisabled: d.EvictionDisabled, MinImageSize: d.MinImageSize, MaxImageSize: d.MaxImageSize,
		LockTimeout: d.LockTimeout, Logger: log}
	if d.Trace {
		cfg.Trace = logWriter{log}
	}
	return cfg
}

// diskCacheConfig is the inverse of diskConfig.
func diskCacheConfig(c diskcache.Config) DiskCacheConfig {
	return DiskCacheConfig{Dir: c.Dir, Persistent: c.Persistent, MaxSize: c.MaxSize, MaxAge: c.MaxAge,
		EvictionDisabled: c.EvictionDisabled, MinImageSize: c.MinImageSize, MaxImageSize: c.MaxImageSize,
		LockTimeout: c.LockTimeout, Trace: c.Trace != nil}
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
	// MemoryLimit, when positive, bounds the bytes of device memory that
	// the context holds on each of its devices, as GOMEMLIMIT bounds the
	// heap (DGEN_MEMORY_LIMIT, a byte count such as 2GiB; 0 for no limit).
	// What counts: the allocators' blocks, held in free lists and in use
	// (Alloc, AllocSite.Alloc, ImageSite.Alloc, and the output fields of
	// generated kernel specs), and the memory from the driver (NewBuffer,
	// NewImage, the storage of device globals), which counts on the first
	// device. Views, an image over a buffer, and pinned memory (the
	// host's) do not count, nor does what the driver keeps for itself
	// (programs, queues, kernel arguments). An allocation past the limit
	// first returns the blocks held in the device's free lists; then the
	// plain forms fail at once with an error wrapping ErrMemoryLimit, and
	// the Context forms (AllocContext, AllocSite.AllocContext,
	// NewBufferContext) wait for frees until their ctx is done. A request
	// larger than the limit fails at once. Stats reports each device's
	// account (stats.Alloc.Budgets).
	MemoryLimit int64
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
	// QueuePool bounds the queues of the context's pool at each queue
	// priority (Context.AcquireQueue, AcquireQueueConfig), which makes
	// them as requests need them: 0 means GOMAXPROCS at Open, and at least
	// 16, since a goroutine that waits for the device holds no P.
	QueuePool int
	// MaxQueueAhead bounds the commands that a queue acquired for a
	// request (Context.AcquireQueueContext) keeps ahead of the host: an
	// enqueue past it waits until the device has completed the oldest, or
	// the request's context is done, so that a cancelled request leaves at
	// most this many of its commands on the device, and a loop of
	// launches needs no pacing of its own. A graph launch counts as one
	// command (DGEN_QUEUE_AHEAD). 0 means 4.
	MaxQueueAhead int
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

// cacheConfig returns the cache configuration of cfg: its Cache, or the
// documented defaults where it has none.
func (cfg *Config) cacheConfig() CacheConfig {
	if cfg.Cache != nil {
		return *cfg.Cache
	}
	return defaultCacheConfig()
}

// driverOptions returns what the backends take of cfg.
func (cfg *Config) driverOptions() driver.Options {
	return driver.Options{CUDALibrary: cfg.CUDALibrary, CUPTILibrary: cfg.CUPTILibrary}
}

// contextSettings are what a context's Config chose, its defaults filled
// in, beside what other parts keep (faultState's SyncLaunches, the
// pool's size, a device's budget): set by OpenConfig, never changed after.
type contextSettings struct {
	// profiling is Config.Profiling, or device-time tracing: queues
	// profile their commands.
	profiling bool
	retune    bool         // Config.Retune (tune.go)
	alloc     alloc.Config // for allocators made on first use (allocator.go)
	graph     graphConfig  // what command graphs may be prepared as
	logger    *slog.Logger // Config.Logger: nil for slog.Default() (Context.log)
	// queueAhead is Config.MaxQueueAhead, its default filled in: the
	// most commands of a bound queue not known complete (queuebind.go).
	queueAhead int
}

// settings returns what cfg chose for a context, with the allocators'
// configuration a and the graphs' g that cfg gave.
func (cfg *Config) settings(a alloc.Config, g graphConfig) contextSettings {
	s := contextSettings{profiling: cfg.Profiling, retune: cfg.Retune, alloc: a, graph: g, logger: cfg.Logger, queueAhead: cfg.MaxQueueAhead}
	if s.queueAhead <= 0 {
		s.queueAhead = defaultQueueAhead
	}
	return s
}

// graphConfig is what command graphs (graph.go) may be prepared as: the
// device API's own graph objects, where the backend has them, unless
// Config.Graphs is GraphsLoop. Where one is off, or a backend has none, a
// graph replays as a loop of prepared commands, one backend call per
// launch of the graph.
type graphConfig struct {
	off [driver.CUDAGraph + 1]bool // by driver.NativeGraph
}

// graphConfig returns what cfg.Graphs allows.
func (cfg *Config) graphConfig() graphConfig {
	var gc graphConfig
	if cfg.Graphs == GraphsLoop {
		for k := range gc.off {
			gc.off[k] = true
		}
	}
	return gc
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

// A setting names one setting in the errors of check: its field in
// rt.Config and its variable, so that a bad value says the same wherever
// it came from.
type setting struct{ field, env string }

// The settings that check checks, each with the variable that the table
// of variables (env.go) gives it.
var (
	setBackend        = settingFor("Backend", true)
	setDevice         = settingFor("Device", true)
	setAllocPolicy    = settingFor("AllocPolicy", true)
	setAllocMaxHeld   = settingFor("AllocMaxHeld", true)
	setMemoryLimit    = settingFor("MemoryLimit", true)
	setTrace          = settingFor("Trace", true)
	setGraphs         = settingFor("Graphs", true)
	setQueuePool      = settingFor("QueuePool", false)
	setQueueAhead     = settingFor("MaxQueueAhead", true)
	setEviction       = settingFor("Cache.EvictionThreshold", true)
	setMaxSize        = settingFor("Cache.Disk.MaxSize", true)
	setMaxAge         = settingFor("Cache.Disk.MaxAge", true)
	setMinImageSize   = settingFor("Cache.Disk.MinImageSize", true)
	setMaxImageSize   = settingFor("Cache.Disk.MaxImageSize", true)
	setLockTimeout    = settingFor("Cache.Disk.LockTimeout", true)
	setRemote         = settingFor("Cache.Remote.URL", true)
	setRemoteMode     = settingFor("Cache.Remote.Mode", true)
	setRemoteTimeout  = settingFor("Cache.Remote.Timeout", true)
	setRemoteLease    = settingFor("Cache.Remote.Lease", true)
	setCompileOptions = settingFor("Cache.CompileOptions", true)
)

// String names the setting: "Config.Device (DGEN_DEVICE)", or
// "Config.QueuePool" for one without a variable.
func (s setting) String() string {
	if s.env == "" {
		return "Config." + s.field
	}
	return "Config." + s.field + " (" + s.env + ")"
}

// bad returns the error of a bad value v of s, wrapping ErrInvalidArgument
// (and wrapped, if any).
func (s setting) bad(v any, why string, wrapped ...error) error {
	if q, ok := v.(string); ok {
		v = strconv.Quote(q)
	}
	err := fmt.Errorf("%w: %v %v: %s", ErrInvalidArgument, s, v, why)
	for _, w := range wrapped {
		err = fmt.Errorf("%w (%w)", err, w)
	}
	return err
}

// nonNegative checks a size, count or duration that cannot be negative.
func (s setting) nonNegative(v int64, show any) error {
	if v < 0 {
		return s.bad(show, "negative")
	}
	return nil
}

// check checks every setting of cfg once, whatever it came from (Go code
// or the environment, whose parsers judge only the syntax of what they
// read): an error wraps ErrInvalidArgument and names the setting
// (setting), so that a bad value gives the same error from both.
// OpenConfig calls it before it opens anything; ConfigFromEnv calls it on
// what it read. A Config without a Cache has the defaults, which pass.
func (cfg *Config) check() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !isAuto(*cfg) {
		name := strings.ToLower(strings.TrimSpace(string(cfg.Backend)))
		if _, err := driver.Lookup(name); err != nil {
			add(setBackend.bad(string(cfg.Backend), fmt.Sprintf("want auto or a registered backend (%s); a backend registers when its package is imported, as rt/opencl and rt/cuda are",
				strings.Join(driver.Backends(), ", ")), ErrNoBackend))
		}
	}
	if err := devsel.Check(cfg.Device); err != nil {
		add(setDevice.bad(cfg.Device, err.Error()))
	}
	if _, err := allocPolicyNames.parse("allocator policy", cfg.AllocPolicy.String()); err != nil {
		add(setAllocPolicy.bad(cfg.AllocPolicy.String(), "want one of "+strings.Join(allocPolicyNames.valid(), ", ")))
	}
	add(setAllocMaxHeld.nonNegative(cfg.AllocMaxHeld, cfg.AllocMaxHeld))
	add(setMemoryLimit.nonNegative(cfg.MemoryLimit, cfg.MemoryLimit))
	if cfg.Tracer == nil {
		if _, err := trace.ParseOptions(cfg.Trace); err != nil {
			add(fmt.Errorf("%w: %v: %w", ErrInvalidArgument, setTrace, err))
		}
	}
	if _, err := graphModeNames.parse("graph mode", cfg.Graphs.String()); err != nil {
		add(setGraphs.bad(cfg.Graphs.String(), "want one of "+strings.Join(graphModeNames.valid(), ", ")))
	}
	add(setQueuePool.nonNegative(int64(cfg.QueuePool), cfg.QueuePool))
	add(setQueueAhead.nonNegative(int64(cfg.MaxQueueAhead), cfg.MaxQueueAhead))
	if cc := cfg.Cache; cc != nil {
		add(setEviction.nonNegative(cc.EvictionThreshold, cc.EvictionThreshold))
		if err := checkOptions(cc.CompileOptions, setCompileOptions.String()); err != nil {
			add(fmt.Errorf("%w: %w", ErrInvalidArgument, err))
		}
		d := &cc.Disk
		add(setMaxSize.nonNegative(d.MaxSize, d.MaxSize))
		add(setMaxAge.nonNegative(int64(d.MaxAge), d.MaxAge))
		add(setMinImageSize.nonNegative(d.MinImageSize, d.MinImageSize))
		add(setMaxImageSize.nonNegative(d.MaxImageSize, d.MaxImageSize))
		add(setLockTimeout.nonNegative(int64(d.LockTimeout), d.LockTimeout))
		r := &cc.Remote
		if _, err := remoteModeNames.parse("remote mode", r.Mode.String()); err != nil {
			add(setRemoteMode.bad(r.Mode.String(), "want one of "+strings.Join(remoteModeNames.valid(), ", ")))
		}
		add(setRemoteTimeout.nonNegative(int64(r.Timeout), r.Timeout))
		add(setRemoteLease.nonNegative(int64(r.Lease), r.Lease))
		if err := checkRemote(cc); err != nil {
			add(fmt.Errorf("%w: %v: %w", ErrInvalidArgument, setRemote, err))
		}
	}
	return errors.Join(errs...)
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
		return fmt.Errorf("a remote tier is configured: %w", diskcache.ErrNoRemote)
	}
	return diskcache.CheckRemote(cfg.Remote.remoteConfig())
}

// The origin of the build options of the API, for checkOptions' errors
// (those of the Config name their setting).
const optionsFromAPI = "the API (the options of raw.Build, LoadProgram or ProgramImage)"

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
