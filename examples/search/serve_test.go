package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// The service of the tests: an index of 2000 vectors of 64 elements, under
// a memory budget of 1 MiB (the index takes half).
const (
	testDim   = 64
	testN     = 2000
	testLimit = 1 << 20
)

// testService is a service that serve serves on 127.0.0.1:0.
type testService struct {
	*service
	vecs [][]float32
	url  string
	stop func() error // ends serve as SIGTERM does and returns its error
}

// startService starts a service whose queries take at most timeout.
func startService(t *testing.T, timeout time.Duration) *testService {
	t.Helper()
	if os.Getenv("DGEN_DEVICE") == "" {
		t.Setenv("DGEN_DEVICE", "cpu")
	}
	vecs := randomVectors(rand.New(rand.NewPCG(5, 6)), testDim, testN)
	s, err := newService(rt.Config{MemoryLimit: testLimit}, vecs, timeout)
	testenv.SkipWithoutDevice(t, err)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.gpu.Close()
		t.Fatal(err)
	}
	sigterm, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(sigterm, ln, s, 10*time.Second) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() { cancel(); serr = <-served })
		return serr
	}
	t.Cleanup(func() { stop(); s.gpu.Close() })
	return &testService{service: s, vecs: vecs, url: "http://" + ln.Addr().String(), stop: stop}
}

// answer is a reply of /nearest.
type answer struct {
	Index int     `json:"idx"`
	Score float32 `json:"score"`
}

// reply is what the service answered to a request.
type reply struct {
	status     int
	retryAfter string
	body       string
}

// get requests path on a connection of its own.
func (ts *testService) get(path string) (reply, error) {
	return do(http.NewRequest("GET", ts.url+path, nil))
}

// query asks /nearest for q on a connection of its own.
func (ts *testService) query(q []float32) (reply, error) {
	return ts.queryContext(context.Background(), q)
}

// queryContext is query, the request cancelled when ctx is done.
func (ts *testService) queryContext(ctx context.Context, q []float32) (reply, error) {
	body, err := json.Marshal(map[string][]float32{"query": q})
	if err != nil {
		return reply{}, err
	}
	return do(http.NewRequestWithContext(ctx, "POST", ts.url+"/nearest", bytes.NewReader(body)))
}

func do(req *http.Request, err error) (reply, error) {
	if err != nil {
		return reply{}, err
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, err = bufio.NewReader(resp.Body).WriteTo(&b)
	return reply{resp.StatusCode, resp.Header.Get("Retry-After"), b.String()}, err
}

// verify checks r, the service's reply to q, against Go's: 200, an index
// whose vector's dot product with q is the largest (within float32's
// rounding of the sums), and that product.
func (ts *testService) verify(q []float32, r reply, err error) error {
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return fmt.Errorf("status %d: %s", r.status, r.body)
	}
	var a answer
	if err := json.Unmarshal([]byte(r.body), &a); err != nil {
		return fmt.Errorf("%v: %q", err, r.body)
	}
	if a.Index < 0 || a.Index >= len(ts.vecs) {
		return fmt.Errorf("answer %+v: no such vector", a)
	}
	dot := func(v []float32) (s float64) {
		for i := range v {
			s += float64(v[i]) * float64(q[i])
		}
		return s
	}
	best := 0
	for i, v := range ts.vecs {
		if dot(v) > dot(ts.vecs[best]) {
			best = i
		}
	}
	got, want := dot(ts.vecs[a.Index]), dot(ts.vecs[best])
	if want-got > 1e-5 || math.Abs(float64(a.Score)-got) > 1e-5 {
		return fmt.Errorf("answer %+v: vector %d's product is %g; Go finds vector %d, %g", a, a.Index, got, best, want)
	}
	return nil
}

// randomQuery returns a random vector of the index's length.
func randomQuery(r *rand.Rand) []float32 { return randomVectors(r, testDim, 1)[0] }

// fillBudget allocates what the budget leaves, so that every query waits
// for memory until the buffer it returns is freed.
func (ts *testService) fillBudget(t *testing.T) rt.Buffer[byte] {
	t.Helper()
	if err := ts.gpu.ReleaseHeld(); err != nil {
		t.Fatal(err)
	}
	b := ts.gpu.Stats().Alloc.Budgets[0]
	buf, err := rt.NewBuffer[byte](ts.gpu, int(b.Limit-b.Used))
	if err != nil {
		t.Fatal(err)
	}
	return buf
}

// waitFor polls cond every millisecond until it holds, or fails t after
// 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("10 s without %s", what)
		}
	}
}

// inFlight starts n queries that wait for memory, and returns once each
// waits: the channel has their errors, once they complete.
func (ts *testService) inFlight(t *testing.T, n int) <-chan error {
	t.Helper()
	waits := ts.gpu.Stats().Alloc.Budgets[0].Waits
	errs := make(chan error, n)
	for i := range n {
		q := randomQuery(rand.New(rand.NewPCG(7, uint64(i))))
		go func() {
			r, err := ts.query(q)
			errs <- ts.verify(q, r, err)
		}()
	}
	waitFor(t, fmt.Sprintf("%d queries waiting for memory", n), func() bool {
		return ts.gpu.Stats().Alloc.Budgets[0].Waits >= waits+uint64(n)
	})
	return errs
}

// TestServiceQueries queries the service from 8 goroutines at once and
// checks the answers against Go's, the probes, the profile of a window of
// queries, and a scrape of /metrics against rt/metrics's documentation
// and Context.Stats.
func TestServiceQueries(t *testing.T) {
	ts := startService(t, 10*time.Second)
	profiled := make(chan reply, 1)
	go func() {
		r, err := ts.get("/debug/dgen/profile?seconds=0.5")
		if err != nil {
			t.Error(err)
		}
		profiled <- r
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 16 {
				q := randomQuery(r)
				rep, err := ts.query(q)
				if err := ts.verify(q, rep, err); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if r, err := ts.query(make([]float32, testDim+1)); err != nil || r.status != http.StatusBadRequest {
		t.Errorf("a query of %d elements: %d %q, %v; want 400", testDim+1, r.status, r.body, err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if r, err := ts.get(path); err != nil || r.status != http.StatusOK {
			t.Errorf("%s: %d %q, %v; want 200", path, r.status, r.body, err)
		}
	}
	r := <-profiled
	p, err := profile.ParseData([]byte(r.body))
	if r.status != http.StatusOK || err != nil || len(p.Sample) == 0 {
		t.Errorf("/debug/dgen/profile: %d, %d bytes, %v: want a profile of the queries", r.status, len(r.body), err)
	}

	scrape, err := ts.get("/metrics")
	if err != nil || scrape.status != http.StatusOK {
		t.Fatalf("/metrics: %d %q, %v", scrape.status, scrape.body, err)
	}
	families, values := parseScrape(t, scrape.body)
	if documented := documentedFamilies(t); documented != nil && !slices.Equal(families, documented) {
		t.Errorf("the scrape's dgen families:\n\t%s\nrt/metrics documents:\n\t%s", strings.Join(families, "\n\t"), strings.Join(documented, "\n\t"))
	}
	st := ts.gpu.Stats()
	d, b := st.Alloc.Devices[0], st.Alloc.Budgets[0]
	dev := fmt.Sprintf(`device="%d",device_name=%q`, d.Index, d.Device)
	var query string
	var requests uint64
	for _, tag := range d.Tags {
		if strings.HasSuffix(tag.Name, "querySite") {
			query, requests = tag.Name, tag.Requests
		}
	}
	for _, tt := range []struct {
		sample string
		want   float64
	}{
		{`dgen_program_lookups_total{context="search",tier="memory"}`, float64(st.Cache.MemHits)},
		{`dgen_program_lookups_total{context="search",tier="disk"}`, float64(st.Cache.DiskHits)},
		{`dgen_program_lookups_total{context="search",tier="build"}`, float64(st.Cache.Builds)},
		{`dgen_queue_pool_queues{context="search"}`, float64(st.Queues.PoolQueues)},
		{`dgen_alloc_requests_total{context="search",` + dev + fmt.Sprintf(",site=%q}", query), float64(requests)},
		{`dgen_memory_limit_bytes{context="search",` + dev + "}", float64(b.Limit)},
		{`dgen_memory_peak_bytes{context="search",` + dev + "}", float64(b.Peak)},
	} {
		if got, ok := values[tt.sample]; !ok || got != tt.want {
			t.Errorf("%s = %v (in the scrape: %v), want %v, as Stats says", tt.sample, got, ok, tt.want)
		}
	}
	if st.Cache.DiskHits+st.Cache.Builds == 0 || st.Queues.PoolQueues == 0 || requests < 8*16 || b.Peak == 0 {
		t.Errorf("Stats after 128 queries: %+v, %d queries allocated: the comparisons above compared nothing", st, requests)
	}
}

// parseScrape returns the dgen families of a scrape in the text format,
// sorted, and its samples' values by name and labels.
func parseScrape(t *testing.T, text string) ([]string, map[string]float64) {
	t.Helper()
	var families []string
	values := map[string]float64{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok && strings.HasPrefix(f, "dgen_") {
			families = append(families, strings.Fields(f)[0])
		}
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics: %q: %v", line, err)
		}
		values[line[:i]] = v
	}
	sort.Strings(families)
	return families, values
}

// documentedFamilies returns the families that rt/metrics's package doc
// lists, sorted; nil outside the source tree.
func documentedFamilies(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../rt/metrics/metrics.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if errors.Is(err, fs.ErrNotExist) {
		t.Logf("rt/metrics's source is not here (a test binary run outside the source tree): the scrape's families are not compared with its doc")
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var families []string
	for _, m := range regexp.MustCompile(`(?m)^\t(dgen_[a-z_]+)`).FindAllStringSubmatch(f.Doc.Text(), -1) {
		families = append(families, m[1])
	}
	if len(families) < 30 {
		t.Fatalf("rt/metrics's package doc lists %d families: the test no longer reads it", len(families))
	}
	sort.Strings(families)
	return slices.Compact(families)
}

// TestServiceDrain shuts the context down under 16 queries in flight:
// readiness fails at once, liveness does not, new queries get 503 at
// once, every query in flight completes with a right answer, and the
// context closes within Shutdown's deadline. Before, a client that gives
// up ends its query's wait for memory.
func TestServiceDrain(t *testing.T) {
	ts := startService(t, 20*time.Second)
	if r, err := ts.get("/readyz"); err != nil || r.status != http.StatusOK {
		t.Fatalf("/readyz before the drain: %d %q, %v; want 200", r.status, r.body, err)
	}
	fill := ts.fillBudget(t)
	gone, cancelQuery := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelQuery()
	if _, err := ts.queryContext(gone, randomQuery(rand.New(rand.NewPCG(12, 13)))); err == nil {
		t.Fatal("a query past the budget, its client gone after 100 ms: answered")
	}
	waitFor(t, "the wait of a query whose client went away ending", func() bool {
		return ts.gpu.Stats().Alloc.Budgets[0].Failures > 0
	})
	errs := ts.inFlight(t, 16)
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- ts.gpu.Shutdown(sctx) }()
	waitFor(t, "/readyz failing", func() bool {
		r, err := ts.get("/readyz")
		return err == nil && r.status == http.StatusServiceUnavailable && strings.Contains(r.body, "shutting down")
	})
	if r, err := ts.get("/healthz"); err != nil || r.status != http.StatusOK {
		t.Errorf("/healthz while draining: %d %q, %v; want 200", r.status, r.body, err)
	}
	begin := time.Now()
	r, err := ts.query(randomQuery(rand.New(rand.NewPCG(8, 9))))
	if took := time.Since(begin); err != nil || r.status != http.StatusServiceUnavailable || took > time.Second {
		t.Errorf("a query while draining: %d %q, %v, in %v; want 503 at once", r.status, r.body, err, took)
	} else {
		t.Logf("a query while draining: 503 in %v", took)
	}
	begin = time.Now()
	if err := fill.Free(); err != nil {
		t.Fatal(err)
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Errorf("a query in flight: %v", err)
		}
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	t.Logf("16 queries in flight completed and the context closed %v after their memory was freed", time.Since(begin))
	if err := ts.gpu.Health(); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("Health after Shutdown: %v, want ErrClosed", err)
	}
	if r, err := ts.get("/readyz"); err != nil || r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz once closed: %d %q, %v; want 503", r.status, r.body, err)
	}
}

// TestServiceSIGTERM ends serve as SIGTERM does under 16 queries in
// flight: the listener closes at once, every query in flight completes
// with a right answer, and serve returns, the context closed, within its
// grace.
func TestServiceSIGTERM(t *testing.T) {
	ts := startService(t, 20*time.Second)
	fill := ts.fillBudget(t)
	errs := ts.inFlight(t, 16)
	begin := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	waitFor(t, "the listener closing", func() bool {
		_, err := ts.get("/readyz")
		return err != nil
	})
	if err := fill.Free(); err != nil {
		t.Fatal(err)
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Errorf("a query in flight: %v", err)
		}
	}
	if err := <-stopped; err != nil {
		t.Errorf("serve: %v", err)
	}
	t.Logf("serve returned %v after SIGTERM", time.Since(begin))
	if err := ts.gpu.Health(); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("Health after serve returned: %v, want ErrClosed", err)
	}
}

// TestServiceMemoryDeadline fills the memory budget: a query waits for
// memory until its deadline, then gets 503 with Retry-After; once the
// memory is freed, queries pass.
func TestServiceMemoryDeadline(t *testing.T) {
	const timeout = 200 * time.Millisecond
	ts := startService(t, timeout)
	fill := ts.fillBudget(t)
	q := randomQuery(rand.New(rand.NewPCG(10, 11)))
	begin := time.Now()
	r, err := ts.query(q)
	took := time.Since(begin)
	if err != nil || r.status != http.StatusServiceUnavailable || r.retryAfter == "" || !strings.Contains(r.body, "memory limit") {
		t.Errorf("a query past the budget: %d, Retry-After %q, %q, %v; want 503 with Retry-After", r.status, r.retryAfter, r.body, err)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("a query past the budget took %v; want its deadline, %v", took, timeout)
	}
	if b := ts.gpu.Stats().Alloc.Budgets[0]; b.Failures == 0 || b.Used > b.Limit {
		t.Errorf("Stats' budget after the refusal: %+v", b)
	}
	if err := fill.Free(); err != nil {
		t.Fatal(err)
	}
	r, err = ts.query(q)
	if err := ts.verify(q, r, err); err != nil {
		t.Errorf("a query once memory is free: %v", err)
	}
}
