package rt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/stats"
)

// TestMain points the persistent cache at a temporary directory, so that
// no test of this package writes to the user's cache directory.
func TestMain(m *testing.M) {
	testenv.SkipExamplesWithoutDevice()
	if os.Getenv("DGEN_CACHE_DIR") == "" {
		dir, err := os.MkdirTemp("", "dgen-rt-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv("DGEN_CACHE_DIR", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// faults is the backend "faulty": the real OpenCL backend with counted
// builds and loads and a delay before every build, so that goroutines meet
// in the cache. The cache's own logic (failures, eviction, out of memory)
// is tested in rt/internal/progcache.
var faults struct {
	builds, loads atomic.Int64
	mu            sync.Mutex
	delay         time.Duration // before every build
}

func init() { driver.Register("faulty", faultyBackend{}) }

type faultyBackend struct{ opencl.Backend }

func (b faultyBackend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	c, err := b.Backend.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return faultyContext{c}, nil
}

type faultyContext struct{ driver.Context }

func (c faultyContext) BuildProgram(source, options string) (driver.Program, error) {
	faults.builds.Add(1)
	faults.mu.Lock()
	d := faults.delay
	faults.mu.Unlock()
	time.Sleep(d)
	return c.Context.BuildProgram(source, options)
}

func (c faultyContext) LoadProgram(bins [][]byte, options string) (driver.Program, error) {
	faults.loads.Add(1)
	return c.Context.LoadProgram(bins, options)
}

func resetFaults(delay time.Duration) {
	faults.builds.Store(0)
	faults.loads.Store(0)
	faults.mu.Lock()
	faults.delay = delay
	faults.mu.Unlock()
}

// openCache opens a context on the faulty backend with cfg changed by
// edit, on the CPU device (PoCL), with a fresh cache directory.
func openCache(t testing.TB, edit func(*rt.CacheConfig)) *rt.Context {
	t.Helper()
	ctx := openCacheUnclosed(t, edit)
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ctx
}

// uniqueSource returns a kernel "fill" that writes value to every element,
// made unique by a comment so that no earlier cache holds it.
func uniqueSource(value string) string {
	return fmt.Sprintf("// %x\n__kernel void fill(__global int *out) { out[get_global_id(0)] = %s; }\n", rand.Uint64(), value)
}

// runFill runs kernel k (fill) over n elements and returns the result.
func runFill(t testing.TB, ctx *rt.Context, q *rt.Queue, k *raw.Kernel, n int) []int32 {
	t.Helper()
	out, err := rt.NewBuffer[int32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(n)); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, n)
	if err := out.Read(q, got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestProgramCacheOneBuild(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			ctx := openCache(t, func(c *rt.CacheConfig) { c.Disk.Persistent = disk })
			resetFaults(50 * time.Millisecond)
			src := uniqueSource("7")
			img := &core.ProgramImage{ID: "test.Fill", Source: src}
			spec := core.NewKernelSpec(img, "fill")
			const n = 64
			var wg sync.WaitGroup
			cks := make([]*core.CachedKernel, n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						cks[i], errs[i] = cx(ctx).KernelFor(spec, cq(ctx.Queue()))
						return
					}
					p, err := cx(ctx).ProgramFor(img)
					if errs[i] = err; err == nil {
						errs[i] = p.Release()
					}
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("goroutine %d: %v", i, err)
				}
			}
			if got := faults.builds.Load(); got != 1 {
				t.Errorf("%d builds, want 1", got)
			}
			if s := ctx.Stats().Cache; s.Builds != 1 || s.Programs != 1 {
				t.Errorf("stats %+v, want 1 build and 1 program", s)
			}
			for i := 0; i < n; i += 2 {
				if cks[i] != cks[0] {
					t.Fatalf("goroutine %d got another kernel", i)
				}
			}
			k, ck, err := cx(ctx).SpawnKernel(spec, cq(ctx.Queue()))
			if err != nil {
				t.Fatal(err)
			}
			if ck != cks[0] {
				t.Errorf("SpawnKernel's cached kernel is another than KernelFor's")
			}
			got := runFill(t, ctx, ctx.Queue(), (*raw.Kernel)(k), 16)
			k.Release()
			for i, v := range got {
				if v != 7 {
					t.Fatalf("out[%d] = %d, want 7", i, v)
				}
			}
		})
	}
}

func TestSpecValuesDistinctPrograms(t *testing.T) {
	ctx := openCache(t, nil)
	q := ctx.Queue()
	img := &core.ProgramImage{ID: "test.Spec", Source: uniqueSource("N * 2"), SpecConsts: []core.CacheSpecValue{{Name: "N", Value: "1"}}}
	spec := core.NewKernelSpec(img, "fill")
	resetFaults(0)
	first := map[string]*core.CachedKernel{}
	for _, step := range []struct {
		value           string // "" = the default
		want            int32
		builds, memHits int64
	}{
		{"", 2, 1, 0},
		{"3", 6, 2, 0},
		{"-4", -8, 3, 0},
		{"3", 6, 3, 1}, // cached: a memory hit
		{"", 2, 3, 2},  // cached
	} {
		if step.value == "" {
			cx(ctx).ClearSpecValue("N")
		} else if err := cx(ctx).SetSpecValue("N", step.value); err != nil {
			t.Fatal(err)
		}
		k, ck, err := cx(ctx).SpawnKernel(spec, cq(q))
		if err != nil {
			t.Fatalf("N=%q: %v", step.value, err)
		}
		got := runFill(t, ctx, q, (*raw.Kernel)(k), 8)
		k.Release()
		if got[0] != step.want || got[7] != step.want {
			t.Errorf("N=%q: %v, want %d", step.value, got, step.want)
		}
		if b := faults.builds.Load(); b != step.builds {
			t.Errorf("N=%q: %d builds, want %d", step.value, b, step.builds)
		}
		if m := ctx.Stats().Cache.MemHits; m != step.memHits {
			t.Errorf("N=%q: %d memory hits, want %d", step.value, m, step.memHits)
		}
		if f, ok := first[step.value]; ok && f != ck {
			t.Errorf("N=%q: another kernel than the first time", step.value)
		}
		first[step.value] = ck
	}
}

func TestSpecValueRejected(t *testing.T) {
	ctx := openCache(t, nil)
	for _, tc := range []struct{ name, value string }{
		{"", "1"}, {"1N", "1"}, {"N-1", "1"}, {"N", ""}, {"N", "1 -DX"}, {"N", `"x"`},
	} {
		if err := cx(ctx).SetSpecValue(tc.name, tc.value); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("SetSpecValue(%q, %q) = %v, want ErrInvalidArgument", tc.name, tc.value, err)
		}
	}
}

func TestSpecLiteral(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{int32(-3), "-3"}, {uint32(7), "7u"}, {int64(5), "5L"}, {uint64(5), "5UL"},
		{float32(0.5), "5e-01f"}, {1.25, "1.25e+00"}, {true, "1"}, {false, "0"},
	} {
		var got string
		var err error
		switch v := tc.v.(type) {
		case int32:
			got, err = core.SpecLiteral(v)
		case uint32:
			got, err = core.SpecLiteral(v)
		case int64:
			got, err = core.SpecLiteral(v)
		case uint64:
			got, err = core.SpecLiteral(v)
		case float32:
			got, err = core.SpecLiteral(v)
		case float64:
			got, err = core.SpecLiteral(v)
		case bool:
			got, err = core.SpecLiteral(v)
		}
		if err != nil || got != tc.want {
			t.Errorf("SpecLiteral(%v) = %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
	if _, err := core.SpecLiteral("x"); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("SpecLiteral(string): %v", err)
	}
}

// TestConcurrentEnqueueOneSpec launches one cached kernel from 64
// goroutines over 4 queues, each through a kernel object of its own with
// its own arguments, and checks every result.
func TestConcurrentEnqueueOneSpec(t *testing.T) {
	ctx := openCache(t, nil)
	const scale = `__kernel void scale(__global const int *in, __global int *out, int f) {
	size_t i = get_global_id(0); out[i] = in[i] * f; }`
	spec := core.NewKernelSpec(&core.ProgramImage{ID: "test.Scale", Source: scale}, "scale")
	queues := []*rt.Queue{ctx.Queue()}
	for range 3 {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	const n, iters = 256, 10
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- func() error {
				q := queues[g%len(queues)]
				in, err := rt.NewBuffer[int32](ctx, n)
				if err != nil {
					return err
				}
				defer in.Free()
				out, err := rt.NewBuffer[int32](ctx, n)
				if err != nil {
					return err
				}
				defer out.Free()
				src := make([]int32, n)
				for i := range src {
					src[i] = int32(g*1000 + i)
				}
				if err := in.Write(q, src); err != nil {
					return err
				}
				got := make([]int32, n)
				ck, _, err := cx(ctx).SpawnKernel(spec, cq(q))
				if err != nil {
					return err
				}
				k := (*raw.Kernel)(ck)
				defer k.Release()
				for it := range iters {
					f := int32(g + it + 1)
					err := errors.Join(raw.SetBuffer(k, 0, in), raw.SetBuffer(k, 1, out), raw.SetArg(k, 2, f))
					var ev *rt.Event
					if err == nil {
						ev, err = raw.Launch(q, k, rt.Range1(n))
					}
					if err != nil {
						return err
					}
					if err := out.Read(q, got, ev); err != nil {
						return err
					}
					ev.Release()
					for i, v := range got {
						if v != src[i]*f {
							return fmt.Errorf("goroutine %d iteration %d: out[%d] = %d, want %d", g, it, i, v, src[i]*f)
						}
					}
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestKernelForHitAllocatesNothing(t *testing.T) {
	ctx := openCache(t, nil)
	spec := core.NewKernelSpec(&core.ProgramImage{ID: "test.Hit", Source: uniqueSource("1")}, "fill")
	q := ctx.Queue()
	if _, err := cx(ctx).KernelFor(spec, cq(q)); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(1000, func() { cx(ctx).KernelFor(spec, cq(q)) }); a != 0 {
		t.Errorf("KernelFor hit: %v allocations, want 0", a)
	}
}

func TestCacheConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		ok   bool
		test func(rt.CacheConfig) bool
	}{
		{map[string]string{}, true, func(c rt.CacheConfig) bool { return c.InMemory && c.EvictionThreshold == 0 && !c.Disk.Persistent }},
		{map[string]string{"DGEN_CACHE_DIR": "/tmp/x"}, true, func(c rt.CacheConfig) bool { return c.Disk.Persistent && c.Disk.Dir == "/tmp/x" }},
		{map[string]string{"DGEN_CACHE_IN_MEM": "0"}, true, func(c rt.CacheConfig) bool { return !c.InMemory }},
		{map[string]string{"DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD": "16M"}, true, func(c rt.CacheConfig) bool { return c.EvictionThreshold == 16<<20 }},
		{map[string]string{"DGEN_PROGRAM_COMPILE_OPTIONS": " -cl-fast-relaxed-math "}, true, func(c rt.CacheConfig) bool { return c.CompileOptions == "-cl-fast-relaxed-math" }},
		{map[string]string{"DGEN_CACHE_MAX_AGE": "36h"}, true, func(c rt.CacheConfig) bool { return c.Disk.MaxAge == 36*time.Hour }},
		{map[string]string{"DGEN_CACHE_MAX_AGE": "3d"}, true, func(c rt.CacheConfig) bool { return c.Disk.MaxAge == 72*time.Hour }},
		{map[string]string{"DGEN_CACHE_MAX_AGE": "0"}, true, func(c rt.CacheConfig) bool { return c.Disk.MaxAge == 0 }},
		{map[string]string{"DGEN_CACHE_THRESHOLD_DAYS": "2"}, true, func(c rt.CacheConfig) bool { return c.Disk.MaxAge == 48*time.Hour }},
		{map[string]string{"DGEN_CACHE_THRESHOLD_DAYS": "2", "DGEN_CACHE_MAX_AGE": "1h"}, true, func(c rt.CacheConfig) bool { return c.Disk.MaxAge == time.Hour }},
		{map[string]string{"DGEN_CACHE_LOCK_TIMEOUT": "300ms"}, true, func(c rt.CacheConfig) bool { return c.Disk.LockTimeout == 300*time.Millisecond }},
		{map[string]string{"DGEN_CACHE_EVICTION_DISABLE": "yes", "DGEN_CACHE_TRACE": "stderr", "DGEN_CACHE_MIN_IMAGE_SIZE": "1KiB", "DGEN_CACHE_MAX_IMAGE_SIZE": "2g", "DGEN_CACHE_MAX_SIZE": "64M"},
			true, func(c rt.CacheConfig) bool {
				return c.Disk.EvictionDisabled && c.Disk.Trace && c.Disk.MinImageSize == 1024 && c.Disk.MaxImageSize == 2<<30 && c.Disk.MaxSize == 64<<20
			}},
		{map[string]string{"DGEN_CACHE_REMOTE": "http://h", "DGEN_CACHE_REMOTE_MODE": "rw", "DGEN_CACHE_REMOTE_KEY": " k ", "DGEN_CACHE_REMOTE_TIMEOUT": "500ms", "DGEN_CACHE_REMOTE_LEASE": "1m"},
			true, func(c rt.CacheConfig) bool {
				r := c.Remote
				return r.URL == "http://h" && r.Mode == rt.RemoteReadWrite && r.Key == " k " && r.Timeout == 500*time.Millisecond && r.Lease == time.Minute
			}},
		{map[string]string{"DGEN_CACHE_REMOTE": "http://h", "DGEN_CACHE_REMOTE_MODE": "read", "DGEN_CACHE_REMOTE_UNSIGNED": "insecure"},
			true, func(c rt.CacheConfig) bool { return c.Remote.Mode == rt.RemoteRead && c.Remote.Unsigned }},
		{map[string]string{"DGEN_CACHE_IN_MEM": "maybe"}, false, nil},
		{map[string]string{"DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD": "-1"}, false, nil},
		{map[string]string{"DGEN_CACHE_MAX_SIZE": "lots"}, false, nil},
		{map[string]string{"DGEN_CACHE_MAX_AGE": "a week"}, false, nil},
		{map[string]string{"DGEN_CACHE_THRESHOLD_DAYS": "x"}, false, nil},
		{map[string]string{"DGEN_CACHE_PERSISTENT": "2"}, false, nil},
		{map[string]string{"DGEN_CACHE_REMOTE": "http://h", "DGEN_CACHE_REMOTE_UNSIGNED": "1"}, false, nil},
		{map[string]string{"DGEN_CACHE_REMOTE": "http://h", "DGEN_CACHE_REMOTE_KEY": "k", "DGEN_CACHE_REMOTE_MODE": "both"}, false, nil},
		{map[string]string{"DGEN_CACHE_REMOTE": "http://h", "DGEN_CACHE_REMOTE_KEY": "k", "DGEN_CACHE_REMOTE_TIMEOUT": "2"}, false, nil},
	} {
		cfg, err := rt.ConfigFromEnv(func(k string) string { return tc.env[k] })
		if tc.ok != (err == nil) || (tc.ok && !tc.test(*cfg.Cache)) {
			t.Errorf("%v: %+v, %v", tc.env, *cfg.Cache, err)
		}
	}
}

func TestMalformedEnvFailsOpen(t *testing.T) {
	t.Setenv("DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD", "big")
	if ctx, err := rt.Open(); err == nil {
		ctx.Close()
		t.Fatal("Open succeeded with a malformed DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD")
	} else if !strings.Contains(err.Error(), "DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD") {
		t.Errorf("error does not name the variable: %v", err)
	}
}

func TestUnusableCacheDirWarnsOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	ctx := openCacheLogged(t, &warn, func(c *rt.CacheConfig) {
		c.Disk.Dir = filepath.Join(file, "cache")
	})
	for i := range 3 {
		p, err := raw.Build(ctx, "p", uniqueSource(fmt.Sprint(i)), "")
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "level=WARN") || !strings.Contains(warn.String(), "dir=") {
		t.Errorf("warnings: %q, want one", warn.String())
	}
	if cx(ctx).PersistentCache().Enabled() {
		t.Error("persistent cache enabled on a file")
	}
}

// childStats is what TestCacheChild prints.
type childStats struct {
	Stats stats.Cache
	Value int32
	Err   string
}

// TestCacheChild is the fresh process of TestPersistentAcrossProcesses: it
// builds the program of DGEN_CACHETEST_SOURCE with the cache in
// DGEN_CACHE_DIR, runs it and prints its cache statistics.
func TestCacheChild(t *testing.T) {
	src := os.Getenv("DGEN_CACHETEST_SOURCE")
	if src == "" {
		t.Skip("run by TestPersistentAcrossProcesses")
	}
	var out childStats
	ctx, err := rt.Open()
	if err == nil {
		defer ctx.Close()
		var k *core.RawKernel
		spec := core.NewKernelSpec(&core.ProgramImage{ID: "test.Child", Source: src}, "fill")
		if k, _, err = cx(ctx).SpawnKernel(spec, cq(ctx.Queue())); err == nil {
			out.Value = runFill(t, ctx, ctx.Queue(), (*raw.Kernel)(k), 4)[3]
			k.Release()
		}
		out.Stats = ctx.Stats().Cache
	}
	if err != nil {
		out.Err = err.Error()
	}
	b, _ := json.Marshal(out)
	fmt.Printf("CHILD %s\n", b)
}

func runChild(t *testing.T, dir, src string) childStats {
	t.Helper()
	testenv.RequireDevice(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChild$", "-test.v")
	cmd.Env = append(os.Environ(), "DGEN_CACHE_DIR="+dir, "DGEN_CACHETEST_SOURCE="+src, "DGEN_DEVICE=cpu")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "CHILD "); ok {
			var s childStats
			if err := json.Unmarshal([]byte(rest), &s); err != nil {
				t.Fatal(err)
			}
			if s.Err != "" {
				t.Fatalf("child: %s", s.Err)
			}
			return s
		}
	}
	t.Fatalf("child printed no statistics:\n%s", b)
	return childStats{}
}

// TestPersistentAcrossProcesses runs fresh processes on one cache
// directory: the first builds, the second loads from disk without
// building; a corrupted binary is detected and rebuilt, then loaded again.
func TestPersistentAcrossProcesses(t *testing.T) {
	if os.Getenv("DGEN_DEVICE") != "" && os.Getenv("DGEN_DEVICE") != "cpu" {
		t.Skip("runs on the CPU device")
	}
	dir := t.TempDir()
	src := uniqueSource("42")
	for _, step := range []struct {
		what           string
		corrupt        bool
		builds, loaded int64
	}{
		{"cold", false, 1, 0},
		{"warm", false, 0, 1},
		{"corrupted", true, 1, 0},
		{"rebuilt", false, 0, 1},
	} {
		if step.corrupt {
			n := 0
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(path, ".bin") {
					b, _ := os.ReadFile(path)
					b[len(b)/2] ^= 0xff
					os.WriteFile(path, b, 0o644)
					n++
				}
				return nil
			})
			if n != 1 {
				t.Fatalf("%d binaries in the cache, want 1", n)
			}
		}
		s := runChild(t, dir, src)
		if s.Value != 42 || s.Stats.Builds != step.builds || s.Stats.DiskHits != step.loaded {
			t.Errorf("%s: value %d, stats %+v; want 42, %d builds, %d disk hits", step.what, s.Value, s.Stats, step.builds, step.loaded)
		}
	}
}

// openCacheUnclosed is openCache without closing the context at cleanup,
// for tests whose failure may leave a kernel locked: they must fail, not
// hang in Close.
func openCacheUnclosed(t testing.TB, edit func(*rt.CacheConfig)) *rt.Context {
	t.Helper()
	return openCacheConfig(t, nil, edit)
}

// openCacheLogged is openCache with the context's log written to w as
// text (slog.TextHandler).
func openCacheLogged(t testing.TB, w io.Writer, edit func(*rt.CacheConfig)) *rt.Context {
	t.Helper()
	ctx := openCacheConfig(t, slog.New(slog.NewTextHandler(w, nil)), edit)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// openCacheConfig is openCacheUnclosed with a logger.
func openCacheConfig(t testing.TB, log *slog.Logger, edit func(*rt.CacheConfig)) *rt.Context {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(t.TempDir()))
	if edit != nil {
		edit(&cc)
	}
	sel := os.Getenv("DGEN_DEVICE")
	if sel == "" {
		sel = "cpu"
	}
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "faulty", Device: sel, Cache: &cc, Logger: log}))
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("open context: %v", err)
	}
	return ctx
}

// within runs f and fails the test if it does not return within 30 seconds.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return within 30 seconds: deadlock", what)
	}
}

// TestEvictionWhileHoldingKernel checks that a kernel object made from a
// cached kernel (as a spec's instance is) stays usable when another
// program's build evicts its program: the cache's kernel is doomed, the
// object holds its own reference to the program; and that Close releases
// an object its owner did not.
func TestEvictionWhileHoldingKernel(t *testing.T) {
	ctx := openCacheUnclosed(t, func(c *rt.CacheConfig) {
		c.Disk.Persistent = false
		c.EvictionThreshold = 1
	})
	q := ctx.Queue()
	a := core.NewKernelSpec(&core.ProgramImage{ID: "test.DeadlockA", Source: uniqueSource("1")}, "fill")
	b := core.NewKernelSpec(&core.ProgramImage{ID: "test.DeadlockB", Source: uniqueSource("2")}, "fill")
	kA, ckA, err := cx(ctx).SpawnKernel(a, cq(q))
	if err != nil {
		t.Fatal(err)
	}
	var kB *core.RawKernel
	within(t, "SpawnKernel(B) while holding A's object", func() { kB, _, err = cx(ctx).SpawnKernel(b, cq(q)) })
	if err != nil {
		t.Fatal(err)
	}
	if s := ctx.Stats().Cache; s.Evictions == 0 || !ckA.Doomed() {
		t.Errorf("stats %+v, A doomed %v: want A evicted", s, ckA.Doomed())
	}
	if got := runFill(t, ctx, q, (*raw.Kernel)(kA), 4); got[0] != 1 {
		t.Errorf("A's object after A's eviction computed %v, want 1s", got)
	}
	if got := runFill(t, ctx, q, (*raw.Kernel)(kB), 4); got[0] != 2 {
		t.Errorf("B computed %v, want 2s", got)
	}
	if err := kA.Release(); err != nil {
		t.Errorf("release A's object: %v", err)
	}
	within(t, "Close", func() { err = ctx.Close() })
	if err != nil {
		t.Errorf("close: %v", err)
	}
	if err := kB.Release(); err != nil {
		t.Errorf("release of B's object, which Close released: %v; want nil", err)
	}
	if err := raw.SetArg((*raw.Kernel)(kB), 0, int32(0)); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("SetArg on B's object after Close: %v, want ErrClosed", err)
	}
}

// TestCacheDirChangesWhileRunning: with real directories, through rt: an
// rm -rf of the cache directory while a context runs is noticed at the
// next build, which makes the directory again and stores there, warning
// once; a regular file put in its place turns the cache off with one
// warning; and a relative directory is made absolute at Open, so that a
// chdir afterwards moves nothing into the new working directory.
func TestCacheDirChangesWhileRunning(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	var warn bytes.Buffer
	ctx := openCacheLogged(t, &warn, func(c *rt.CacheConfig) { c.Disk.Dir = "cache" })
	dir := filepath.Join(base, "cache")
	disk := cx(ctx).PersistentCache()
	if disk.Dir() != dir || !disk.Enabled() {
		t.Fatalf("cache in %q (enabled %v), want %q", disk.Dir(), disk.Enabled(), dir)
	}
	t.Chdir(work)
	build := func(i int) {
		t.Helper()
		p, err := raw.Build(ctx, "p", uniqueSource(fmt.Sprint(i)), "")
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
	}
	entries := func() int {
		es, _ := disk.List()
		return len(es)
	}
	build(1)
	if entries() != 1 {
		t.Fatalf("%d entries after a build, want 1", entries())
	}
	if _, err := os.Stat(filepath.Join(work, "cache")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cache wrote into the working directory of after Open: %v", err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	build(2)
	build(3)
	if entries() != 2 || !disk.Enabled() {
		t.Errorf("after rm -rf: %d entries (enabled %v), want 2", entries(), disk.Enabled())
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 || !strings.Contains(warn.String(), "was removed; made it again") {
		t.Errorf("after rm -rf: %d warnings, want one saying the directory was made again:\n%s", n, warn.String())
	}

	warn.Reset()
	os.RemoveAll(dir)
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	build(4)
	build(5)
	if disk.Enabled() {
		t.Error("a file in place of the cache directory: the cache is still on")
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 || !strings.Contains(warn.String(), "cache off") || !strings.Contains(warn.String(), "no longer a directory") {
		t.Errorf("a file in its place: %d warnings, want one saying the cache is off:\n%s", n, warn.String())
	}
}
