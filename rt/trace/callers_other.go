//go:build !amd64

package trace

import (
	"runtime"
	"sync/atomic"
)

// fpCallers stores in pcs[:n] the return addresses of the caller's frame and
// the frames above it, the calling function's own frame first, and returns
// the number stored. Without a frame-pointer walk for this architecture it
// uses runtime.Callers, whose logical frames key the site cache as well.
//
//go:noinline
func fpCallers(pcs *siteKey, n int) int {
	return runtime.Callers(2, pcs[:n])
}

func rdtsc() uint64 { return 0 }

// publish stores v to *p where other threads may read it with an atomic
// load.
func publish(p *uint64, v uint64) { atomic.StoreUint64(p, v) }

const haveTSC = false
