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

// CacheConfig is rt.CacheConfig as the core takes it: rt converts its
// fields, which rt documents (with the DGEN_ variable of each).
type CacheConfig struct {
	InMemory          bool
	EvictionThreshold int64
	CompileOptions    string
	Disk              DiskCacheConfig
	Remote            RemoteCacheConfig
}

// DiskCacheConfig is rt.DiskCacheConfig, field for field, which rt
// documents: rt converts one to the other.
type DiskCacheConfig struct {
	Dir                        string
	Persistent                 bool
	MaxSize                    int64
	MaxAge                     time.Duration
	EvictionDisabled           bool
	MinImageSize, MaxImageSize int64
	LockWait                   time.Duration
	Trace                      bool
}

// RemoteCacheConfig is rt.RemoteCacheConfig, field for field, which rt
// documents.
type RemoteCacheConfig struct {
	URL    string
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
// when cc is nil. check has checked it.
func resolveCacheConfig(cc *CacheConfig) (CacheConfig, error) {
	if cc != nil {
		return *cc, nil
	}
	return cacheConfigFromEnv(nil)
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
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidArgument, derr))
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
			errs = append(errs, fmt.Errorf("%w: DGEN_CACHE_IN_MEM=%q: %s", ErrInvalidArgument, v, envconf.BoolSyntax))
		}
		cfg.InMemory = b || !ok
	}
	if v := strings.TrimSpace(getenv("DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD")); v != "" {
		n, err := envconf.Size(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD=%q: %v", ErrInvalidArgument, v, err))
		}
		cfg.EvictionThreshold = n
	}
	cfg.CompileOptions = strings.TrimSpace(getenv("DGEN_PROGRAM_COMPILE_OPTIONS"))
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

// Config is rt.Config as the core takes it: rt converts its fields, which
// rt documents, one by one, and withEnv fills those left unset from their
// DGEN_ variables. Backend auto is chooseBackend's (backend.go).
type Config struct {
	Backend      Backend
	Device       string
	Profiling    bool
	Retune       bool
	SyncLaunches bool
	AllocPolicy  AllocPolicy
	AllocMaxHeld int64
	Trace        string
	Tracer       *trace.Tracer
	Cache        *CacheConfig
	Graphs       GraphMode
	QueuePool    int
	Logger       *slog.Logger
}

// ConfigFromEnv returns the configuration that the environment asks for
// (rt.ConfigFromEnv), reading variables through getenv, and checks it.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg, err := Config{}.withEnv(getenv)
	if err == nil {
		err = cfg.check()
	}
	return cfg, err
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
			if errors.Is(err, ErrInvalidArgument) {
				return fmt.Errorf("%s=%q: %w", name, v, err)
			}
			return fmt.Errorf("%w: %s=%q: %w", ErrInvalidArgument, name, v, err)
		}
		return nil
	}
	errs := []error{
		env("DGEN_BACKEND", cfg.Backend != BackendAuto, func(v string) error {
			cfg.Backend = Backend(v) // check checks it, as it checks one that Config names
			return nil
		}),
		env("DGEN_DEVICE", cfg.Device != "", func(v string) error {
			cfg.Device = v
			return nil
		}),
		env("DGEN_PROFILE", cfg.Profiling, setBool(&cfg.Profiling)),
		env("DGEN_SYNC_LAUNCHES", cfg.SyncLaunches, setBool(&cfg.SyncLaunches)),
		env("DGEN_ALLOC_POLICY", cfg.AllocPolicy != AllocFull, func(v string) error { return cfg.AllocPolicy.UnmarshalText([]byte(v)) }),
		env("DGEN_ALLOC_MAX_HELD", cfg.AllocMaxHeld != 0, func(v string) (err error) {
			cfg.AllocMaxHeld, err = envconf.Size(v)
			return err
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
				return gc, fmt.Errorf("%w: %s=%q: %s", ErrInvalidArgument, name, v, envconf.BoolSyntax)
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

// The settings that check checks.
var (
	setBackend        = setting{"Backend", "DGEN_BACKEND"}
	setDevice         = setting{"Device", "DGEN_DEVICE"}
	setAllocPolicy    = setting{"AllocPolicy", "DGEN_ALLOC_POLICY"}
	setAllocMaxHeld   = setting{"AllocMaxHeld", "DGEN_ALLOC_MAX_HELD"}
	setTrace          = setting{"Trace", trace.EnvVar}
	setGraphs         = setting{"Graphs", ""}
	setQueuePool      = setting{"QueuePool", ""}
	setEviction       = setting{"Cache.EvictionThreshold", "DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD"}
	setCompileOptions = setting{"Cache.CompileOptions", "DGEN_PROGRAM_COMPILE_OPTIONS"}
	setMaxSize        = setting{"Cache.Disk.MaxSize", "DGEN_CACHE_MAX_SIZE"}
	setMaxAge         = setting{"Cache.Disk.MaxAge", "DGEN_CACHE_THRESHOLD_DAYS"}
	setMinImageSize   = setting{"Cache.Disk.MinImageSize", "DGEN_CACHE_MIN_IMAGE_SIZE"}
	setMaxImageSize   = setting{"Cache.Disk.MaxImageSize", "DGEN_CACHE_MAX_IMAGE_SIZE"}
	setLockWait       = setting{"Cache.Disk.LockWait", "DGEN_CACHE_LOCK_TIMEOUT"}
	setRemote         = setting{"Cache.Remote", "DGEN_CACHE_REMOTE"}
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
// or the environment, which withEnv parses without judging the values it
// can represent): an error wraps ErrInvalidArgument and names the setting
// (setting), so that a bad value gives the same error from both. Open and
// OpenConfig call it before they open anything; ConfigFromEnv calls it on
// what it read.
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
	if cfg.Tracer == nil {
		if _, err := trace.ParseOptions(cfg.Trace); err != nil {
			add(fmt.Errorf("%w: %v: %w", ErrInvalidArgument, setTrace, err))
		}
	}
	if _, err := graphModeNames.parse("graph mode", cfg.Graphs.String()); err != nil {
		add(setGraphs.bad(cfg.Graphs.String(), "want one of "+strings.Join(graphModeNames.valid(), ", ")))
	}
	add(setQueuePool.nonNegative(int64(cfg.QueuePool), cfg.QueuePool))
	if cc := cfg.Cache; cc != nil {
		add(setEviction.nonNegative(cc.EvictionThreshold, cc.EvictionThreshold))
		if err := checkOptions(cc.CompileOptions, optionsFromConfig); err != nil {
			add(fmt.Errorf("%w: %w", ErrInvalidArgument, err))
		}
		d := &cc.Disk
		add(setMaxSize.nonNegative(d.MaxSize, d.MaxSize))
		add(setMaxAge.nonNegative(int64(d.MaxAge), d.MaxAge))
		add(setMinImageSize.nonNegative(d.MinImageSize, d.MinImageSize))
		add(setMaxImageSize.nonNegative(d.MaxImageSize, d.MaxImageSize))
		add(setLockWait.nonNegative(int64(d.LockWait), d.LockWait))
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
		return fmt.Errorf("DGEN_CACHE_REMOTE is set: %w", diskcache.ErrNoRemote)
	}
	return diskcache.CheckRemote(diskcache.RemoteConfig{URL: cfg.Remote.URL, Getenv: cfg.Remote.Getenv})
}

// The origins of build options, for checkOptions' errors.
const (
	optionsFromConfig = "Config.Cache.CompileOptions (DGEN_PROGRAM_COMPILE_OPTIONS)"
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
