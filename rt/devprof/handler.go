package devprof

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/trace"
)

// Record records the profile of what c does for d, or until ctx is done,
// which is an error wrapping ctx.Err(). It subscribes to c's tracer for
// the window, so that the context's commands are traced only meanwhile,
// and several recordings may overlap. Its inuse_space is what the
// allocators hold at the window's end (rt.Context.Stats: each site's
// bytes in use and held), so that memory allocated before the window
// counts; rt.NewBuffer's buffers and images, which no allocator holds,
// count in the alloc sample types only. A d that is not positive is an
// error wrapping rt.ErrInvalidArgument, and a context that is closed or
// faulted returns its error (rt.Context.Err) at once.
func Record(ctx context.Context, c *rt.Context, d time.Duration) (*profile.Profile, error) {
	if c == nil {
		return nil, fmt.Errorf("devprof: record: %w: nil context", rt.ErrInvalidArgument)
	}
	if d <= 0 {
		return nil, fmt.Errorf("devprof: record: %w: duration %v is not positive", rt.ErrInvalidArgument, d)
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("devprof: record: %w", err)
	}
	r := newRecorder()
	start := time.Now()
	unsubscribe := c.Tracer().Subscribe(r, trace.StreamTask, trace.StreamMem)
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()
	unsubscribe()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("devprof: record: %w", err)
	}
	r.inUse(c)
	p := r.profile()
	p.TimeNanos, p.DurationNanos = start.UnixNano(), int64(time.Since(start))
	return p, nil
}

// inUse sets the memory in use of every site to what c's allocators hold
// now.
func (r *recorder) inUse(c *rt.Context) {
	st := c.Stats()
	devs := c.Devices()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.mems {
		s.inuse = 0
	}
	for _, d := range st.Alloc.Devices {
		name := d.Device
		if d.Index < len(devs) {
			name = devs[d.Index].String() // as the trace names it
		}
		for _, t := range d.Tags {
			if held := t.InUse + t.Held; held > 0 {
				r.mem(t.Name, name).inuse += held // sites of one name (two packages') add up
			}
		}
	}
}

// DefaultSeconds is the length of the window that Handler records when
// the request does not say.
const DefaultSeconds = 30

// Handler returns an http.Handler that records a profile of c (Record)
// and writes it in pprof's format, as net/http/pprof's profile handler
// does for the CPU: the query parameter seconds sets the window (30 when
// absent), which must be shorter than the server's WriteTimeout. A
// request cancelled meanwhile gets nothing; a context closed or faulted
// gets 503 Service Unavailable.
//
//	http.Handle("/debug/dgen/profile", devprof.Handler(ctx))
func Handler(c *rt.Context) http.Handler {
	if c == nil {
		panic(fmt.Errorf("devprof: Handler: %w: nil context", rt.ErrInvalidArgument))
	}
	return handler{c}
}

type handler struct{ c *rt.Context }

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	sec := float64(DefaultSeconds)
	if s := r.FormValue("seconds"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || v > 1<<31 {
			http.Error(w, fmt.Sprintf("devprof: seconds=%q: want a positive number", s), http.StatusBadRequest)
			return
		}
		sec = v
	}
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.WriteTimeout > 0 && sec >= srv.WriteTimeout.Seconds() {
		http.Error(w, fmt.Sprintf("devprof: seconds=%v exceeds the server's WriteTimeout (%v)", sec, srv.WriteTimeout), http.StatusBadRequest)
		return
	}
	p, err := Record(r.Context(), h.c, time.Duration(sec*float64(time.Second)))
	if err != nil {
		switch {
		case r.Context().Err() != nil: // the client went away
		case errors.Is(err, rt.ErrClosed), errors.Is(err, rt.ErrDeviceFault):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="dgen-profile"`)
	p.Write(w) // an error here is the client's, who has gone
}
