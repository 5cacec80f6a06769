package devprof_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends"
	"github.com/dgen-go/dgen/rt/devprof"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

const saxpy = `__kernel void saxpy(float a, __global const float *x, __global float *y, int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}`

const n = 1 << 16

// open opens a context with cfg and builds saxpy's kernel with its
// arguments set, over buffers from the allocator.
func open(t *testing.T, cfg rt.Config) (*rt.Context, *raw.Kernel) {
	t.Helper()
	if cfg.Device == "" { // OpenConfig reads no variable: the device the environment selects
		cfg.Backend, cfg.Device = rt.Backend(testenv.Backend()), testenv.Device()
	}
	ctx, err := rt.OpenConfig(cfg)
	testenv.SkipWithoutDevice(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	prog, err := raw.Build(ctx, "saxpy", saxpy, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	q := ctx.Queue()
	x, err := rt.Alloc[float32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	y, err := rt.Alloc[float32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(raw.SetArg(k, 0, float32(2)), raw.SetBuffer(k, 1, x), raw.SetBuffer(k, 2, y), raw.SetArg(k, 3, int32(n))); err != nil {
		t.Fatal(err)
	}
	return ctx, k
}

// launchSaxpy is the Go caller that the profiles must name.
func launchSaxpy(t *testing.T, q *rt.Queue, k *raw.Kernel, times int) {
	t.Helper()
	for range times {
		if err := raw.Submit(q, k, rt.Range1(n)); err != nil {
			t.Error(err)
			return
		}
	}
	if err := q.Finish(); err != nil {
		t.Error(err)
	}
}

// churn allocates and frees memory on q: every allocation after the
// first reuses the block of the one before.
func churn(t *testing.T, q *rt.Queue, times int) {
	t.Helper()
	for range times {
		b, err := rt.Alloc[float32](q, 4*n)
		if err != nil {
			t.Fatal(err)
		}
		b.Free()
	}
}

// totals sums the sample type typ of p, over the samples whose frames
// include fn when fn is set.
func total(t *testing.T, p *profile.Profile, typ, fn string) int64 {
	t.Helper()
	i := -1
	for j, st := range p.SampleType {
		if st.Type == typ {
			i = j
		}
	}
	if i < 0 {
		t.Fatalf("profile has no sample type %s", typ)
	}
	var sum int64
	for _, s := range p.Sample {
		if fn == "" || hasFrame(s, fn) {
			sum += s.Value[i]
		}
	}
	return sum
}

func hasFrame(s *profile.Sample, fn string) bool {
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if ln.Function.Name == fn {
				return true
			}
		}
	}
	return false
}

// summaryTotals returns the commands and device time of a summary.
func summaryTotals(s *trace.Summary) (count, dev int64) {
	for _, r := range s.Rows() {
		count += r.Count
		dev += r.DeviceTotal
	}
	return count, dev
}

func within5(a, b int64) bool { return math.Abs(float64(a-b)) <= 0.05*float64(max(a, b)) }

// traceRun writes a trace of launches and allocations on PoCL and returns
// the trace file's records (read while the context is open), its path
// (JSON, once closed), and what the allocator counted.
func traceRun(t *testing.T) (records []byte, path string, requests uint64) {
	path = filepath.Join(t.TempDir(), "trace")
	ctx, k := open(t, rt.Config{Trace: "perfetto:" + path + ",device=all"})
	q := ctx.Queue()
	launchSaxpy(t, q, k, 20)
	churn(t, q, 5)
	requests = ctx.Stats().Alloc.Devices[0].Tag(0).Requests
	records, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	return records, path, requests
}

func TestFromTraceAgreesWithSummary(t *testing.T) {
	records, path, requests := traceRun(t)
	sum, err := trace.ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	wantCount, wantDev := summaryTotals(sum)
	if wantDev == 0 {
		t.Fatal("the trace has no device time")
	}
	jsonData, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{{"json", jsonData}, {"records", records}} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := devprof.FromTrace(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CheckValid(); err != nil {
				t.Fatal(err)
			}
			if got := total(t, p, "device_time", ""); !within5(got, wantDev) {
				t.Errorf("device time %d ns, the summary's %d ns: more than 5%% apart", got, wantDev)
			}
			if got := total(t, p, "commands", ""); got != wantCount {
				t.Errorf("%d commands, the summary's %d", got, wantCount)
			}
			caller := "github.com/dgen-go/dgen/rt/devprof_test.launchSaxpy"
			if got := total(t, p, "commands", caller); got != 20 {
				t.Errorf("%d commands under %s, want the 20 launches", got, caller)
			}
			if got := total(t, p, "alloc_objects", "untagged"); got != int64(requests) {
				t.Errorf("%d allocations of site untagged, the allocator's %d requests", got, requests)
			}
		})
	}
}

func TestFromTraceBadInput(t *testing.T) {
	if _, err := devprof.FromTrace([]byte("not a trace")); err == nil {
		t.Error("FromTrace of text succeeded")
	}
}

// TestPprofTop runs go tool pprof -top on a profile from a trace: it names
// the kernel and its Go caller.
func TestPprofTop(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command: cannot run go tool pprof")
	}
	_, path, _ := traceRun(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := devprof.FromTrace(data)
	if err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(t.TempDir(), "gpu.pb.gz")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		index string
		want  []string
	}{
		{"device_time", []string{"kernel saxpy", "devprof_test.launchSaxpy"}},
		{"commands", []string{"kernel saxpy", "devprof_test.launchSaxpy"}},
		{"alloc_objects", []string{"untagged"}},
	} {
		out, err := exec.Command(gobin, "tool", "pprof", "-top", "-sample_index="+tt.index, pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("go tool pprof -top -sample_index=%s does not name %q:\n%s", tt.index, w, out)
			}
		}
	}
}

// TestHandler records a window of a context over HTTP while a summary
// subscribes to the same tracer: the profile's device time is the
// summary's.
func TestHandler(t *testing.T) {
	tr := trace.New()
	tr.SetDeviceSampling(1)
	ctx, k := open(t, rt.Config{Tracer: tr})
	q := ctx.Queue()
	srv := httptest.NewServer(devprof.Handler(ctx))
	defer srv.Close()

	var sum trace.Summary
	unsubscribe := tr.Subscribe(&sum, trace.StreamTask)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond) // inside the window
		launchSaxpy(t, q, k, 30)
		churn(t, q, 3)
	}()
	resp, err := http.Get(srv.URL + "?seconds=2")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-done
	unsubscribe()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	p, err := profile.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantCount, wantDev := summaryTotals(&sum)
	if wantDev == 0 || wantCount < 30 {
		t.Fatalf("the summary has %d commands and %d ns of device time: the work was not traced", wantCount, wantDev)
	}
	if got := total(t, p, "device_time", ""); !within5(got, wantDev) {
		t.Errorf("device time %d ns, the summary's %d ns: more than 5%% apart", got, wantDev)
	}
	if got := total(t, p, "commands", "github.com/dgen-go/dgen/rt/devprof_test.launchSaxpy"); got != 30 {
		t.Errorf("%d commands of launchSaxpy, want 30", got)
	}
	tag := ctx.Stats().Alloc.Devices[0].Tag(0)
	if got, want := total(t, p, "inuse_space", "untagged"), tag.InUse+tag.Held; got != want {
		t.Errorf("inuse_space of untagged = %d, the allocator's in use and held %d", got, want)
	}
	if got := total(t, p, "alloc_objects", "untagged"); got != 3 {
		t.Errorf("alloc_objects of untagged = %d, want the window's 3", got)
	}
}

// TestHandlerErrors asks for what the handler refuses.
func TestHandlerErrors(t *testing.T) {
	ctx, _ := open(t, rt.Config{})
	srv := httptest.NewServer(devprof.Handler(ctx))
	defer srv.Close()
	get := func(query string) int {
		resp, err := http.Get(srv.URL + query)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, q := range []string{"?seconds=x", "?seconds=0", "?seconds=-1", "?seconds=NaN"} {
		if got := get(q); got != http.StatusBadRequest {
			t.Errorf("%s: status %d, want %d", q, got, http.StatusBadRequest)
		}
	}
	ctx.Close()
	if got := get("?seconds=0.1"); got != http.StatusServiceUnavailable {
		t.Errorf("closed context: status %d, want %d", got, http.StatusServiceUnavailable)
	}
}

func TestRecordErrors(t *testing.T) {
	ctx, _ := open(t, rt.Config{})
	if _, err := devprof.Record(context.Background(), ctx, 0); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("Record for 0s = %v, want an error wrapping rt.ErrInvalidArgument", err)
	}
	if _, err := devprof.Record(context.Background(), nil, time.Second); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("Record of nil = %v, want an error wrapping rt.ErrInvalidArgument", err)
	}
	c, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := devprof.Record(c, ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Record past its deadline = %v, want an error wrapping context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Record returned %v after its deadline", d)
	}
}

// TestRecordWithoutDeviceTimes records a context opened without device-time
// sampling: the profile counts the commands and says that it has no device
// time.
func TestRecordWithoutDeviceTimes(t *testing.T) {
	ctx, k := open(t, rt.Config{})
	type result struct {
		p   *profile.Profile
		err error
	}
	ch := make(chan result)
	go func() {
		p, err := devprof.Record(context.Background(), ctx, time.Second)
		ch <- result{p, err}
	}()
	time.Sleep(200 * time.Millisecond)
	launchSaxpy(t, ctx.Queue(), k, 5)
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := total(t, r.p, "commands", "github.com/dgen-go/dgen/rt/devprof_test.launchSaxpy"); got != 5 {
		t.Errorf("%d commands of launchSaxpy, want 5", got)
	}
	if got := total(t, r.p, "device_time", ""); got != 0 {
		t.Errorf("device time %d ns on a context whose queues do not profile", got)
	}
	if !strings.Contains(strings.Join(r.p.Comments, "\n"), "no device times") {
		t.Errorf("comments %q do not say that the profile has no device times", r.p.Comments)
	}
}
