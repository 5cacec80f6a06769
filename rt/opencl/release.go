package opencl

/*
#include "dgen_cl.h"
*/
import "C"

import "sync"

// releases releases the process's memory objects. NVIDIA's OpenCL's
// clReleaseMemObject waits for the kernels that use the object to end
// (H200, driver 580: 1.85 s beside the kernel of 2 s that wrote the
// buffer), where the specification lets the object go once the commands
// that use it have completed; PoCL's returns at once. So Release of a
// buffer or an image hands the object to releases and returns: the
// caller's goroutine waits for no kernel, as driver.Buffer's Release
// asks. OpenCL counts the object's references to its context, so a
// release that runs after the context's clReleaseContext is still in
// order.
var releases releaser

// Release implements driver.Buffer: the memory object is released off
// the caller's goroutine (releases). clReleaseMemObject fails only for an
// object that is not one, which rt never passes, so no error is lost.
func (b buffer) Release() error {
	h := b.h
	releases.do(func() { C.clReleaseMemObject(h) })
	return nil
}

// A releaser runs releases one at a time, in the order they come, on a
// goroutine of its own that runs while any are pending, so that a release
// that waits holds one OS thread, however many come behind it.
type releaser struct {
	mu      sync.Mutex // protects the fields below
	pending []func()
	running bool // a goroutine runs the pending releases
}

// do runs f on the releaser's goroutine, after the releases before it.
func (r *releaser) do(f func()) {
	r.mu.Lock()
	r.pending = append(r.pending, f)
	start := !r.running
	r.running = true
	r.mu.Unlock()
	if start {
		go r.run()
	}
}

// run runs the pending releases until there are none.
func (r *releaser) run() {
	for {
		r.mu.Lock()
		if len(r.pending) == 0 {
			r.running = false
			r.pending = nil
			r.mu.Unlock()
			return
		}
		f := r.pending[0]
		r.pending[0] = nil
		r.pending = r.pending[1:]
		r.mu.Unlock()
		f()
	}
}
