package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/devprof"
	"github.com/dgen-go/dgen/rt/metrics"
	"github.com/dgen-go/dgen/rt/trace"
)

// service answers nearest-neighbour queries over one index on one
// context, which it opened and closes.
type service struct {
	gpu     *rt.Context
	ix      *Index
	timeout time.Duration // the longest a query takes, its waits for memory included
}

// newService opens a context as cfg says, with a tracer that
// /debug/dgen/profile records device times through, and copies vecs to
// its device as the index.
func newService(cfg rt.Config, vecs [][]float32, timeout time.Duration) (*service, error) {
	cfg.Tracer = trace.New()
	cfg.Tracer.SetDeviceSampling(16) // device times of one command in 16 per Go line, while a profile records
	gpu, err := rt.OpenConfig(cfg)
	if err != nil {
		return nil, err
	}
	ix, err := NewIndex(gpu.Queue(), len(vecs[0]), vecs)
	if err != nil {
		return nil, errors.Join(err, gpu.Close())
	}
	return &service{gpu: gpu, ix: ix, timeout: timeout}, nil
}

// handler returns the service's routes.
func (s *service) handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), metrics.NewCollector(s.gpu, "search"))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nearest", s.nearest)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /debug/dgen/profile", devprof.Handler(s.gpu))
	return mux
}

// serve serves s on ln until ctx is done (SIGTERM), then shuts down
// within grace: first the server, which closes ln and waits for the
// requests in flight, then the context, which waits for the queues they
// hold and closes.
func serve(ctx context.Context, ln net.Listener, s *service, grace time.Duration) error {
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return errors.Join(srv.Shutdown(sctx), s.gpu.Shutdown(sctx))
}

// nearest answers {"query": [...]} with {"idx": i, "score": s}: the index's
// vector i has the largest dot product s with the query.
func (s *service) nearest(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query []float32 `json:"query"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
	defer cancel()
	q, err := s.gpu.AcquireQueueContext(ctx, nil) // the query's commands stop once ctx is done
	if err != nil {
		fail(w, err)
		return
	}
	defer s.gpu.ReleaseQueue(q)
	best, score, err := s.ix.NearestContext(ctx, q, req.Query)
	if err != nil {
		fail(w, err)
		return
	}
	json.NewEncoder(w).Encode(struct {
		Index int     `json:"idx"`
		Score float32 `json:"score"`
	}{best, score})
}

// fail answers a query that err ended: 400 for the client's mistake; 503
// with Retry-After when memory or time ran short, since the query may
// pass later or on another replica; 503 once the context drains, closed
// or faulted; else 500.
func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, rt.ErrInvalidArgument):
		code = http.StatusBadRequest
	case errors.Is(err, rt.ErrMemoryLimit), errors.Is(err, context.DeadlineExceeded):
		w.Header().Set("Retry-After", "1")
		code = http.StatusServiceUnavailable
	case errors.Is(err, rt.ErrShuttingDown), errors.Is(err, rt.ErrClosed), errors.Is(err, rt.ErrDeviceFault):
		code = http.StatusServiceUnavailable
	}
	http.Error(w, err.Error(), code)
}

// readyz is the readiness probe: it fails from the moment the context
// drains (and once closed or faulted), so that the load balancer sends
// queries elsewhere.
func (s *service) readyz(w http.ResponseWriter, r *http.Request) {
	probe(w, s.gpu.Health())
}

// healthz is the liveness probe: it fails only after a device fault.
// This service opens no second context, so a fault is the last row of
// the probe table in docs/RUNTIME.md: only a restart gets the device
// back. A drain passes: the process exits by itself once it is done.
func (s *service) healthz(w http.ResponseWriter, r *http.Request) {
	if err := s.gpu.Health(); errors.Is(err, rt.ErrDeviceFault) {
		probe(w, err)
		return
	}
	probe(w, nil)
}

func probe(w http.ResponseWriter, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ok\n")
}
