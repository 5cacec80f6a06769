package core

import (
	"context"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// Tuning is the whole outcome of a SpecConst.Tune, for tests.
type Tuning[T any] struct {
	Value  T
	Cached bool
	Timed  int
	Values []T
	Times  []time.Duration
	Errs   []error
}

// TuneFull is SpecConst.TuneContext with the whole outcome.
func TuneFull[T any](ctx context.Context, q *Queue, s *SpecConst[T], run func(*Queue, T) error) (Tuning[T], error) {
	r, err := s.tune(ctx, q, run)
	return Tuning[T]{r.value, r.cached, r.timed, r.values, r.times, r.errs}, err
}

// TuneRecordKey returns the cache key under which Tune keeps the tuning
// record of s for q's device, for tests that forge records.
func TuneRecordKey[T any](q *Queue, s *SpecConst[T]) diskcache.Key {
	d := s.registration()
	return q.ctx.tuneKey(d, checkOf(d), q)
}
