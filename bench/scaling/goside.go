package main

import (
	"errors"
	"sync"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// goSide runs the workloads on rt, one queue per goroutine: the queues are
// made once and kept, as a service keeps one per worker.
type goSide struct {
	ctx *rt.Context
	n   int
	qs  []*rt.Queue
	raw *raw.Program // the launch loop's program for rt/raw (floor.go)
}

// queues returns g queues of the context's first device.
func (s *goSide) queues(g int) ([]*rt.Queue, error) {
	for len(s.qs) < g {
		q, err := s.ctx.NewQueue(s.ctx.Devices()[0])
		if err != nil {
			return nil, err
		}
		s.qs = append(s.qs, q)
	}
	return s.qs[:g], nil
}

// work is one goroutine's loop: it runs until the deadline and returns its
// count and the request latencies it appended to lat.
type work func(deadline time.Time, lat []float64) (int64, []float64, error)

// window runs a loop on g goroutines, each with its queue, from the moment
// all are set up until the deadline, and reports what they did. setup
// makes goroutine i's loop on its queue q before the window opens.
func (s *goSide) window(g int, d time.Duration, setup func(i int, q *rt.Queue) (work, error)) (result, error) {
	qs, err := s.queues(g)
	if err != nil {
		return result{}, err
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	var deadline time.Time // written before start is closed
	counts := make([]int64, g)
	lats := make([][]float64, g)
	errs := make([]error, g)
	for i, q := range qs {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			w, err := setup(i, q)
			ready.Done()
			<-start
			if err != nil {
				errs[i] = err
				return
			}
			counts[i], lats[i], errs[i] = w(deadline, make([]float64, 0, latCap))
		}()
	}
	ready.Wait()
	before := s.ctx.Stats().Alloc.DriverAllocs
	t0 := time.Now()
	deadline = t0.Add(d)
	close(start)
	done.Wait()
	r := result{elapsed: time.Since(t0), counts: counts, allocs: s.ctx.Stats().Alloc.DriverAllocs - before}
	for _, l := range lats {
		r.lat = append(r.lat, l...)
	}
	return r, errors.Join(errs...)
}

// launches is the launch loop: Touch's generated Enqueue, 64 at a time
// between looks at the clock, then the queue finished.
func (s *goSide) launches(g int, d time.Duration) (result, error) {
	return s.window(g, d, func(_ int, q *rt.Queue) (work, error) {
		p, err := s.touchBuffer(q)
		if err != nil {
			return nil, err
		}
		return func(deadline time.Time, lat []float64) (int64, []float64, error) {
			defer p.Free()
			spec := &Touch{P: p}
			r := rt.Range1(64)
			var n int64
			for time.Now().Before(deadline) {
				for range 64 {
					if err := spec.Enqueue(q, r); err != nil {
						return n, lat, err
					}
				}
				n += 64
			}
			return n, lat, q.Finish()
		}, nil
	})
}

// touchBuffer returns a new buffer of touch64's 64 ints, zeros written on
// q.
func (s *goSide) touchBuffer(q *rt.Queue) (rt.Buffer[int32], error) {
	p, err := rt.NewBuffer[int32](s.ctx, 64)
	if err == nil {
		if err = p.Write(q, make([]int32, 64)); err != nil {
			p.Free()
		}
	}
	return p, err
}

// allocator is how a request allocates its two buffers.
type allocator int

const (
	siteAlloc allocator = iota // from xSite and ySite
	poolAlloc                  // from rt.Alloc
)

func (a allocator) alloc(q *rt.Queue, n int) (x, y rt.Buffer[float32], err error) {
	if a == siteAlloc {
		if x, err = xSite.Alloc(q, n); err == nil {
			if y, err = ySite.Alloc(q, n); err != nil {
				x.Free()
			}
		}
		return x, y, err
	}
	if x, err = rt.Alloc[float32](q, n); err == nil {
		if y, err = rt.Alloc[float32](q, n); err != nil {
			x.Free()
		}
	}
	return x, y, err
}

// requests is the request loop: allocate two buffers, a blocking write, a
// launch, a blocking read, free both; each request timed.
func (s *goSide) requests(a allocator) func(g int, d time.Duration) (result, error) {
	return func(g int, d time.Duration) (result, error) {
		return s.window(g, d, func(_ int, q *rt.Queue) (work, error) {
			hx, hy := make([]float32, s.n), make([]float32, s.n)
			r := rt.Range1(s.n)
			return func(deadline time.Time, lat []float64) (int64, []float64, error) {
				var n int64
				for time.Now().Before(deadline) {
					t0 := time.Now()
					if err := request(q, a, hx, hy, r); err != nil {
						return n, lat, err
					}
					if len(lat) < latCap {
						lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e3)
					}
					n++
				}
				return n, lat, nil
			}, nil
		})
	}
}

func request(q *rt.Queue, a allocator, hx, hy []float32, r rt.Range) error {
	x, y, err := a.alloc(q, len(hx))
	if err != nil {
		return err
	}
	err = x.Write(q, hx)
	if err == nil {
		err = (&Axpb{A: 2, X: x, Y: y}).Enqueue(q, r)
	}
	if err == nil {
		err = y.Read(q, hy)
	}
	return errors.Join(err, x.Free(), y.Free())
}

// fill allocates the request buffers of g goroutines, each on its queue,
// holds them all at once, and frees them.
func (s *goSide) fill(g int, a allocator) error {
	qs, err := s.queues(g)
	if err != nil {
		return err
	}
	var held []rt.Buffer[float32]
	for _, q := range qs {
		x, y, err := a.alloc(q, s.n)
		if err != nil {
			return err
		}
		held = append(held, x, y)
	}
	var errs []error
	for _, b := range held {
		errs = append(errs, b.Free())
	}
	return errors.Join(errs...)
}

// serve is the serve loop: g requests in flight at once, each run by a
// goroutine of its own that the loop starts when one ends, as a server
// starts a handler per request. A request takes a queue of the context's
// pool for its life (Context.AcquireQueue), or, shared set, uses the
// context's queue, which every request then shares; it is timed from its
// start, and its host memory is one of g pairs that the requests in flight
// pass on.
func (s *goSide) serve(shared bool) func(g int, d time.Duration) (result, error) {
	return func(g int, d time.Duration) (result, error) {
		host := make(chan [2][]float32, g)
		for range g {
			host <- [2][]float32{make([]float32, s.n), make([]float32, s.n)}
		}
		r := rt.Range1(s.n)
		var (
			mu   sync.Mutex
			lat  = make([]float64, 0, latCap*g)
			errs []error
			wg   sync.WaitGroup
			n    int64
		)
		before := s.ctx.Stats().Alloc.DriverAllocs
		t0 := time.Now()
		for deadline := t0.Add(d); time.Now().Before(deadline); n++ {
			h := <-host
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				err := s.handle(shared, h[0], h[1], r)
				took := float64(time.Since(start).Nanoseconds()) / 1e3
				host <- h
				mu.Lock()
				if len(lat) < cap(lat) {
					lat = append(lat, took)
				}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		res := result{elapsed: time.Since(t0), counts: []int64{n}, lat: lat, allocs: s.ctx.Stats().Alloc.DriverAllocs - before}
		return res, errors.Join(errs...)
	}
}

// handle is a request's goroutine: a queue of the pool for the request
// (or the context's shared one), then the request itself.
func (s *goSide) handle(shared bool, hx, hy []float32, r rt.Range) error {
	if shared {
		return request(s.ctx.Queue(), siteAlloc, hx, hy, r)
	}
	q, err := s.ctx.AcquireQueue()
	if err != nil {
		return err
	}
	return errors.Join(request(q, siteAlloc, hx, hy, r), s.ctx.ReleaseQueue(q))
}
