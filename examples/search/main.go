// Command search runs two nearest-neighbour indexes of different vector
// lengths on one rt.Context: the newcomer's case of dgen's issue 44. Each
// index gives its launches its own value of the specialization constant
// Dim (a field of the kernel spec, Dim.Of(128)), so the two share the
// context, its caches and its queues, and a Dim.Set elsewhere in the
// program changes neither. It queries vector 100 of each index, which
// must find itself with a score of 1, and prints one JSON object.
//
// With -http, search is a service that its operators can see into, one
// index of random vectors (-dim, -n) answering POST /nearest
// {"query": [...]} with {"idx": i, "score": s}:
//
//	/metrics               the context's statistics (rt/metrics), for Prometheus
//	/debug/dgen/profile    device time by Go line (rt/devprof): go tool pprof URL?seconds=30
//	/healthz               liveness: fails only after a device fault
//	/readyz                readiness: fails from the moment the service drains
//
// Each query acquires a queue of the context's pool and bounds its work,
// its waits for device memory (-memory-mib, Config.MemoryLimit) included,
// by its request's context and -timeout; a query that memory or time runs
// short for gets 503 with Retry-After. On SIGTERM the server stops taking
// requests and finishes those in flight, then the context drains and
// closes, within -grace. README.md has the probes' wiring for Kubernetes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"   // NVIDIA GPUs through CUDA's driver API, where libcuda loads
	_ "github.com/dgen-go/dgen/rt/opencl" // every OpenCL device, PoCL on the CPU among them
)

// Answer is one query's result.
type Answer struct {
	Dim   int     `json:"dim"`
	Query int     `json:"query"`
	Index int     `json:"idx"`
	Score float32 `json:"score"`
}

var (
	addr    = flag.String("http", "", "serve queries on this address (host:port) instead of running the check")
	dim     = flag.Int("dim", 128, "the length of the service's vectors")
	n       = flag.Int("n", 100000, "the number of the service's vectors")
	memMiB  = flag.Int64("memory-mib", 0, "the device memory the service may hold, in MiB (0: DGEN_MEMORY_LIMIT's, else no limit)")
	timeout = flag.Duration("timeout", 5*time.Second, "the longest a query takes, its waits for memory included")
	grace   = flag.Duration("grace", 25*time.Second, "the time that SIGTERM leaves the queries in flight and the context's drain")
)

func main() {
	flag.Parse()
	if *addr != "" {
		if err := runService(); err != nil {
			fmt.Fprintln(os.Stderr, "search:", err)
			os.Exit(1)
		}
		return
	}
	answers, err := run()
	json.NewEncoder(os.Stdout).Encode(struct {
		Answers []Answer `json:"answers"`
		Error   string   `json:"error,omitempty"`
	}{answers, errString(err)})
	if err != nil {
		os.Exit(1)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func run() (answers []Answer, err error) {
	ctx, err := rt.Open()
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, ctx.Close()) }()
	q := ctx.Queue()
	r := rand.New(rand.NewPCG(1, 2))
	var idxs []*Index
	var data [][][]float32
	for _, d := range []struct{ dim, n int }{{64, 1000}, {128, 500}} {
		vecs := randomVectors(r, d.dim, d.n)
		ix, err := NewIndex(q, d.dim, vecs)
		if err != nil {
			return nil, err
		}
		defer ix.Free()
		idxs, data = append(idxs, ix), append(data, vecs)
	}
	// Elsewhere in the program: the context's value, which launches that
	// give none would use. Neither index's launches do.
	if err := Dim.Set(ctx, 64); err != nil {
		return nil, err
	}
	for i, ix := range idxs {
		best, score, err := ix.Nearest(q, data[i][100])
		if err != nil {
			return answers, err
		}
		answers = append(answers, Answer{Dim: ix.dim, Query: 100, Index: best, Score: score})
		if best != 100 || math.Abs(float64(score)-1) > 1e-4 {
			return answers, fmt.Errorf("index of %d-element vectors: vector 100 found %d (score %g); want itself, score 1", ix.dim, best, score)
		}
	}
	return answers, nil
}

// runService serves an index of random vectors on *addr until SIGTERM.
func runService() error {
	sigterm, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	vecs := randomVectors(rand.New(rand.NewPCG(1, 2)), *dim, *n)
	s, err := newService(rt.Config{MemoryLimit: *memMiB << 20}, vecs, *timeout)
	if err != nil {
		return err
	}
	defer s.gpu.Close() // at once, where Shutdown ran out of time
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	return serve(sigterm, ln, s, *grace)
}

// randomVectors returns n random vectors of length dim, each of length 1:
// a vector's dot product with itself is 1 and with the others less.
func randomVectors(r *rand.Rand, dim, n int) [][]float32 {
	vecs := make([][]float32, n)
	for i := range vecs {
		v := make([]float32, dim)
		var norm float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			norm += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		vecs[i] = v
	}
	return vecs
}
