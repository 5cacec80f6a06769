package opencl

/*
#include "dgen_cl.h"

// dgen_markers enqueues a marker on each of the n queues qs and flushes
// it, so that it completes once the commands enqueued there before it
// have; it stores the markers in evs and returns how many it made (a
// queue that takes no marker, as after a device fault, orders nothing).
static inline int dgen_markers(cl_command_queue *qs, int n, cl_event *evs) {
	int made = 0;
	for (int i = 0; i < n; i++) {
		if (clEnqueueMarkerWithWaitList(qs[i], 0, NULL, &evs[made]) == CL_SUCCESS) {
			clFlush(qs[i]);
			made++;
		}
	}
	return made;
}

// dgen_markers_done reports whether each of the n events has completed or
// failed; once they have, it releases them.
static inline int dgen_markers_done(cl_event *evs, int n) {
	for (int i = 0; i < n; i++) {
		cl_int s = CL_QUEUED;
		if (clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) == CL_SUCCESS && s > CL_COMPLETE)
			return 0;
	}
	for (int i = 0; i < n; i++) clReleaseEvent(evs[i]);
	return 1;
}
*/
import "C"

import (
	"sync"
	"time"
)

// Releasing memory objects on NVIDIA's OpenCL.
//
// NVIDIA's clReleaseMemObject of a buffer that an enqueued kernel uses
// waits for the kernel to end, and holds other threads' allocations and
// transfers back meanwhile (H200, driver 580: 1.85 s beside a kernel of
// 2 s, and the same again for the next allocation when the release ran
// on a goroutine of its own), where the specification lets an object go
// once the commands that use it have completed; PoCL's returns at once.
// So a context on NVIDIA's platform defers each release until the
// commands enqueued so far on its queues, the only ones that can use the
// object, have completed: Release enqueues a marker on each queue
// (holdset: a queue's Release waits for that) and hands the object and
// the markers to the context's releaser, which releases it once they
// have completed. A queue's Release first releases every object pending
// (flush), without waiting for the markers (NVIDIA's release then waits
// for its commands, as it did before), so that no object outlives a queue
// whose commands used it: NVIDIA's clReleaseMemObject of one whose queue
// had been released crashed (SIGSEGV at address 8, H200, driver 580, in
// the releases that a context's Release ran after its queues). Releases
// happen in the order they were asked for: an object that no queue takes
// a marker for is released at once only when nothing is pending before
// it. An allocation or a blocking write that finds the device out
// of memory waits for the pending releases and tries once more
// (drainReleases), so that memory freed behind a kernel is used again
// after the kernel, as when the release waited.

// release releases the memory object h of c: at once where c does not
// defer releases, else after the commands enqueued on c's queues.
func (c *context) release(h C.cl_mem) error {
	if c == nil || !c.deferRelease {
		return check("clReleaseMemObject", C.clReleaseMemObject(h))
	}
	qs := c.queues.Hold()
	var evs []C.cl_event
	if len(qs) > 0 {
		evs = make([]C.cl_event, len(qs))
		evs = evs[:C.dgen_markers(&qs[0], C.int(len(qs)), &evs[0])]
	}
	// Queued before the holds end, so that a queue's Release, which waits
	// for them, then finds it pending (flush).
	p := pendingRelease{h, evs}
	queued := c.releases.add(p)
	c.queues.Unhold(qs)
	if !queued {
		return p.releaseNow()
	}
	return nil
}

// A releaser releases memory objects once their markers have completed,
// in the order they came, on a goroutine of its own that runs while any
// are pending. It polls the markers, sleeping between looks, rather than
// block in clWaitForEvents, so that a release waiting behind a long
// kernel holds no thread. clReleaseMemObject fails only for an object
// that is not one, which rt never passes, so no error is lost.
type releaser struct {
	mu       sync.Mutex // protects the fields below; held across no driver call
	pending  []pendingRelease
	added    uint64     // objects added since the context was made
	released uint64     // of them, objects released
	running  bool       // a goroutine releases the pending objects
	closing  bool       // the context is being released: release without waiting
	hurry    int        // flushes in progress: release without waiting
	changed  *sync.Cond // broadcast when an object is released or running becomes false; its L is &mu
}

// A pendingRelease is a memory object and the markers it waits for.
type pendingRelease struct {
	h       C.cl_mem
	markers []C.cl_event
}

// add queues p behind the objects pending and starts the releaser's
// goroutine if none runs. With nothing pending, it queues nothing and
// reports false where p need not wait, having no markers or a context
// that is being released: the caller releases p now.
func (r *releaser) add(p pendingRelease) bool {
	r.mu.Lock()
	if !r.running && (len(p.markers) == 0 || r.closing) {
		r.mu.Unlock()
		return false
	}
	r.pending = append(r.pending, p)
	r.added++
	start := !r.running
	r.running = true
	r.mu.Unlock()
	if start {
		go r.run()
	}
	return true
}

// releaseNow releases p's markers and its object without waiting.
func (p pendingRelease) releaseNow() error {
	for _, e := range p.markers {
		C.clReleaseEvent(e)
	}
	return check("clReleaseMemObject", C.clReleaseMemObject(p.h))
}

// releasePoll is the longest the releaser sleeps between two looks at a
// pending object's markers.
const releasePoll = 2 * time.Millisecond

// run releases the pending objects in order, each once its markers have
// completed (at once once the context is being released), until none is
// left.
func (r *releaser) run() {
	sleep := 20 * time.Microsecond
	for {
		r.mu.Lock()
		if len(r.pending) == 0 {
			r.running = false
			r.pending = nil
			r.cond().Broadcast()
			r.mu.Unlock()
			return
		}
		p, closing := r.pending[0], r.closing || r.hurry > 0
		r.mu.Unlock()
		if !closing && len(p.markers) > 0 && C.dgen_markers_done(&p.markers[0], C.int(len(p.markers))) == 0 {
			time.Sleep(sleep)
			sleep = min(2*sleep, releasePoll)
			continue
		}
		if closing {
			p.releaseNow()
		} else {
			C.clReleaseMemObject(p.h) // dgen_markers_done released the markers, if any
		}
		sleep = 20 * time.Microsecond
		r.mu.Lock()
		r.pending[0] = pendingRelease{}
		r.pending = r.pending[1:]
		r.released++
		r.cond().Broadcast()
		r.mu.Unlock()
	}
}

// drainReleases waits until the objects pending now have been released, and
// reports whether there were any: an allocation that found the device
// out of memory calls it before it tries again, since the memory of a
// release comes back only once the kernels before it have ended, where
// NVIDIA's own release would have waited for them.
func (c *context) drainReleases() bool {
	if c == nil || !c.deferRelease {
		return false
	}
	r := &c.releases
	r.mu.Lock()
	defer r.mu.Unlock()
	target := r.added
	had := r.released < target
	for r.released < target && r.running {
		r.cond().Wait()
	}
	return had
}

// isOutOfMemory reports whether code is one of OpenCL's out-of-memory
// errors: CL_MEM_OBJECT_ALLOCATION_FAILURE or CL_OUT_OF_RESOURCES.
func isOutOfMemory(code C.cl_int) bool {
	return code == C.CL_MEM_OBJECT_ALLOCATION_FAILURE || code == C.CL_OUT_OF_RESOURCES
}

// close makes the releaser release what is pending without waiting for
// its markers, and returns once it has: the context's Release calls it
// before clReleaseContext.
func (r *releaser) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closing = true
	for r.running {
		r.cond().Wait()
	}
}

// flush releases the objects pending now without waiting for their
// markers, and returns once they are released: a queue's Release calls it
// before clReleaseCommandQueue.
func (r *releaser) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	target := r.added
	r.hurry++
	for r.released < target && r.running {
		r.cond().Wait()
	}
	r.hurry--
}

// cond returns changed, made on first use; r.mu is held.
func (r *releaser) cond() *sync.Cond {
	if r.changed == nil {
		r.changed = sync.NewCond(&r.mu)
	}
	return r.changed
}

// pendingReleases returns how many memory objects wait for their markers:
// for tests.
func (c *context) pendingReleases() int {
	c.releases.mu.Lock()
	defer c.releases.mu.Unlock()
	return len(c.releases.pending)
}
