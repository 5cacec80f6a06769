package trace

// fpCallers stores in pcs[:n] the return addresses of the caller's frame and
// the frames above it, read from the frame pointer chain: the calling
// function's own frame first, as runtime.Callers(1, ...) would return them
// before expanding inlined calls and eliding wrappers. It returns the
// number stored, fewer than n at the top of the stack, or 0 when the chain
// does not look like Go frames (then the caller must not trust pcs). It
// costs a few nanoseconds where runtime.Callers costs a hundred.
//
//go:noescape
func fpCallers(pcs *siteKey, n int) int

// publish stores v to *p where other threads may read it with an atomic
// load: on amd64 a plain store, which the CPU keeps in order after the
// stores before it (a release store), where atomic.StoreUint64 is an XCHG
// that also waits for the store buffer to drain. Being in assembly, the
// call also keeps the compiler from moving earlier stores after it.
//
//go:noescape
func publish(p *uint64, v uint64)

// rdtsc returns the CPU's time-stamp counter.
//
//go:noescape
func rdtsc() uint64

const haveTSC = true
