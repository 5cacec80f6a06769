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

// rdtsc returns the CPU's time-stamp counter.
//
//go:noescape
func rdtsc() uint64

const haveTSC = true
