package cuda

import (
	"sync"
	"sync/atomic"
	"time"
)

// A gate keeps CUDA's driver from starving a call that needs a device's
// context to itself while other goroutines keep its streams busy.
//
// Some driver calls take the primary context's lock, or wait for its
// streams, against every command enqueued on the device: loading a module
// and its functions' code (cuModuleLoadDataEx, and cuModuleGetFunction
// under lazy loading, CUDA's default since 12.2), unloading one, creating
// and destroying a stream, allocating and freeing memory. The driver does
// not take them in turn: measured on an H200 (driver 580, 2026-11-28,
// bench/faultloop), a goroutine in cuModuleGetFunction and another in
// cuStreamCreate waited over 60 s while 15 others wrote, launched and read
// on streams of their own, and the same loop in C against the CUDA runtime
// (bench/faultloop/faultlat) waits the same. So each such call closes its
// device's gate while it runs (hold), and each command enqueued on the
// device waits at the gate (pass) until every call that holds it has
// returned, for at most gateHold: the streams drain, the call gets the
// driver, and no command waits longer than gateHold for a call that does
// not return (a module whose loading waits for a kernel that never ends,
// say). A command waits at an open gate for nothing but an atomic load.
//
// A gate belongs to a device of the process, not to a context: the
// contexts of a process share each device's primary context.
type gate struct {
	closers atomic.Int32 // calls that closed the gate and have not returned

	mu   sync.Mutex    // mu guards open
	open chan struct{} // closed when closers drops to 0; nil while it is 0
}

// gateHold is the longest a command waits at a closed gate.
var gateHold = 100 * time.Millisecond

// hold closes the gate until the function it returns is called, once,
// when the driver call it is closed for has returned.
func (g *gate) hold() (reopen func()) {
	g.mu.Lock()
	if g.closers.Add(1) == 1 {
		g.open = make(chan struct{})
	}
	g.mu.Unlock()
	return g.reopen
}

func (g *gate) reopen() {
	g.mu.Lock()
	if g.closers.Add(-1) == 0 {
		close(g.open)
		g.open = nil
	}
	g.mu.Unlock()
}

// pass returns once the gate is open, or after gateHold.
func (g *gate) pass() {
	if g.closers.Load() == 0 {
		return
	}
	g.wait()
}

func (g *gate) wait() {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if open == nil {
		return
	}
	t := time.NewTimer(gateHold)
	defer t.Stop()
	select {
	case <-open:
	case <-t.C:
	}
}
