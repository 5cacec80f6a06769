package fleetcache

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// The fleet's trust: an entry that fails its checks is dropped, counted
// (Stats.Rejected) and reported by one warning per process; a signed entry
// that this node cannot verify (another DGEN_CACHE_REMOTE_KEY, or none) is
// never replaced by this node's own, so that a node configured with the
// wrong key cannot overwrite the fleet's entries.

// rejectWarned is set once a process has warned of a rejected entry.
var rejectWarned atomic.Bool

// reject counts and traces the rejection err of the entry at addr, warns
// once per process, and remembers a signed entry that this node cannot
// verify. A first look (diskcache.FirstLook) is not counted: the lookup's
// Claim fetches again and counts it.
func (f *Fleet) reject(ctx context.Context, key *diskcache.Key, addr string, err error) {
	var r *rejection
	if errors.As(err, &r) && r.signed {
		f.foreign.Store(addr, true)
	}
	f.tracef("drop %s %s: %v", key.ProgramName, addr, err)
	if diskcache.FirstLook(ctx) {
		return
	}
	f.rejected.Add(1)
	if f.cfg.Logger != nil && !rejectWarned.Swap(true) {
		f.cfg.Logger.Warn("dgen: remote program cache entry rejected; such entries are never loaded, and counted, not reported again",
			"url", Redact(f.cfg.URL), "program", key.ProgramName, "err", err, "check", keyHint(r))
	}
}

// keyHint suggests what to check for a rejection of a signed entry.
func keyHint(r *rejection) string {
	if r != nil && r.signed {
		return "check that DGEN_CACHE_REMOTE_KEY is the fleet's"
	}
	return ""
}

// keeps reports whether the entry at addr is a signed entry this node
// could not verify, which it must not replace.
func (f *Fleet) keeps(addr string) bool {
	_, ok := f.foreign.Load(addr)
	return ok
}
