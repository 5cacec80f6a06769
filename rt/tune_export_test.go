package rt

import "github.com/dgen-go/dgen/rt/diskcache"

// TuneRecordKey returns the cache key under which Tune keeps the tuning
// record of s for q's device, for tests that forge records.
func TuneRecordKey[T any](q *Queue, s *SpecConst[T]) diskcache.Key {
	d := s.registration()
	return q.ctx.tuneKey(d, checkOf(d), q)
}
