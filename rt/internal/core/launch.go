package core

import (
	"fmt"
	rtrace "runtime/trace"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// The launch path: Queue.launch, which every kernel launch outside a
// graph takes, a generated spec's (SubmitSpec, LaunchSpec: generated.go)
// and rt/raw's (raw.go) alike, with its checks and the binding of a spec's
// hidden device-global arguments. It takes the kernel object
// (kernelObject), whose launch record it hands the driver (kernel.go).

// A launchOp is what a launch returns, and how errors name it: opSubmit
// returns no event (the generated Enqueue, rt/raw's Submit), opLaunch its
// event (EnqueueEvent, rt/raw's Launch); opCheck launches nothing
// (CheckLaunch, a test hook).
type launchOp uint8

const (
	opSubmit launchOp = iota
	opLaunch
	opCheck
)

func (op launchOp) String() string {
	switch op {
	case opLaunch:
		return "launch"
	case opCheck:
		return "check"
	}
	return "submit"
}

// A launchCall is how a launch was called: op, and skip, the frames
// between the entry point's caller and the user's code, as for beginTask.
type launchCall struct {
	op   launchOp
	skip int
}

// launch enqueues the kernel object k over r after wait, as c says: with
// an event, which it returns, or without one. inst is the spec's instance
// that k is the kernel object of (SubmitSpec, LaunchSpec), whose setters'
// first error it returns and whose hidden arguments it binds first, and
// which it parks again at the end, whatever happens; or nil for rt/raw's
// kernel (Submit, Launch), whose arguments it checks instead
// (checkLaunch).
//
// It is the launch path of every kernel launch outside a graph, kept
// short because a loop of small kernels waits for it, and a launch's cost
// beside the driver's is mostly its instructions and the code they are
// spread over: the checks of a launch like the last one are comparisons
// (checkLaunch), the record goes to the driver in one call (enqueue), and
// what is rare (a recording queue, tracing, an error) leaves the path
// through calls of its own, so that the common path is a few contiguous
// lines of code. What it must undo, even if a trace subscriber panics, it
// undoes in one open-coded defer (launching.end), which costs next to
// nothing, where three deferred calls recorded at run time cost a launch
// 300 instructions.
func (q *Queue) launch(k *kernelObject, inst *Kernel, r *Range, wait []*Event, c launchCall) (*Event, error) {
	if k == nil || inst != nil && inst.hit.k == nil {
		return nil, launchMisuse(inst, c.op)
	}
	l := launching{q: q, k: k, inst: inst}
	defer l.end()
	b := q.bound()
	if b != nil {
		if err := b.admit(q, nil); err != nil {
			return nil, k.failed(c.op, err)
		}
	}
	if err := q.enter(); err != nil {
		return nil, k.failed(c.op, err)
	}
	l.entered = true
	dw, err := q.checkLaunch(k, inst, r, wait, c.op)
	if err != nil {
		return nil, err
	}
	if rec := q.rec.Load(); rec != nil {
		return nil, q.recordLaunch(rec, k, inst, r, dw, c.op, c.skip+1)
	}
	if err := k.useArgs(c.op); err != nil {
		return nil, err
	}
	l.used = true
	if rtrace.IsEnabled() || q.tq.Subscribed() {
		return q.launchTraced(k, inst, r, wait, dw, b, c)
	}
	lr := q.beginLaunch(&k.site, c.skip+1)
	ev, err := k.enqueue(q, dw, c.op == opLaunch)
	if err := q.launched(k, r, b, lr, ev, err, c.op); err != nil {
		return nil, err
	}
	if c.op == opLaunch {
		return newEvent(q, ev, k.label), nil
	}
	return nil, nil
}

// launchTraced is the end of launch, after the uses of k's arguments, on a
// queue that a trace subscriber or Go's execution tracer watches: the
// launch's task, and an event for its device times where tracing samples
// it. Its skip is launch's, one frame deeper.
func (q *Queue) launchTraced(k *kernelObject, inst *Kernel, r *Range, wait []*Event, dw []driver.Event, b *queueBind, c launchCall) (*Event, error) {
	skip, event := c.skip+1, c.op == opLaunch
	if rtrace.IsEnabled() {
		q.goTraceKernel(k, inst, skip+1)
	}
	tk := q.beginTask(trace.Kernel, k.label, skip+1, wait)
	// Without an event of its own, a launch makes one for its device
	// times when tracing samples it.
	want := event || q.wantsEvent(tk)
	lr := q.beginLaunch(&k.site, skip+1)
	var ev driver.Event
	var err error
	if want && !event && q.timer != nil && k.foreign == 0 {
		ev, err = q.timer.LaunchArgsTimed(k.drv, &k.args, &k.passed.nd, dw) // the event is for the times only
	} else {
		ev, err = k.enqueue(q, dw, want)
	}
	if want {
		tk.End()
	} else {
		tk.EndRelease()
	}
	if err := q.launched(k, r, b, lr, ev, err, c.op); err != nil {
		return nil, err
	}
	switch {
	case event:
		return q.newTracedEvent(ev, k.label, tk), nil
	case want:
		q.addPending(tk, nil, ev)
		tk.Release()
	}
	return nil, nil
}

// launched ends the launch of k over r that beginLaunch recorded as lr,
// whose enqueue returned ev and err: the error of a failed one (ev
// released), or, once the driver has it, its buffers' uses recorded for
// stream-ordered reuse and its request binding told.
func (q *Queue) launched(k *kernelObject, r *Range, b *queueBind, lr launchRec, ev driver.Event, err error, op launchOp) error {
	if err = q.endLaunch(lr, err); err != nil {
		return q.launchFailed(k, r, ev, err, op)
	}
	q.recordArgs(k)
	if b != nil {
		b.enqueued(q)
	}
	return nil
}

// launchMisuse is the error of a launch of no kernel object (a nil raw
// kernel), or of an instance that Acquire did not return.
func launchMisuse(inst *Kernel, op launchOp) error {
	if inst != nil {
		return errNoInstance()
	}
	return nilKernel(op.String())
}

// failed is the error err of a launch of k, as op, before the driver saw
// it.
func (k *kernelObject) failed(op launchOp, err error) error {
	return fmt.Errorf("%s kernel %q: %w", op, k.name, err)
}

// launching is what a launch must undo when it returns: the uses of its
// buffer arguments (useArgs), the instance of a spec (inst, if not nil),
// parked again, and its queue's enter.
type launching struct {
	q             *Queue
	k             *kernelObject
	inst          *Kernel
	entered, used bool
}

// end undoes what l says, in that order. The instance parks inside the
// queue's enter, so that Queue.Release, which waits for the calls inside,
// finds it in its slot; a launch that did not enter a released queue
// gives it to its prototype's pool instead.
func (l *launching) end() {
	if l.used {
		l.k.doneArgs()
	}
	if l.inst != nil {
		if l.entered || l.inst.hit.q.gate.released.Load() == nil {
			l.inst.park()
		} else {
			l.inst.hit.unpark()
		}
	}
	if l.entered {
		l.q.exit()
	}
}

// launchFailed is the error of a launch of k over r whose enqueue failed
// with err; it releases ev, if the driver returned one.
func (q *Queue) launchFailed(k *kernelObject, r *Range, ev driver.Event, err error, op launchOp) error {
	if ev != nil {
		ev.Release()
	}
	return q.ctx.failed(q, fmt.Errorf("%s kernel %q over %v on %q: %w", op, k.name, *r, q.dev.Name, err))
}

// recordLaunch records a launch of k (of the instance inst, or nil) over r
// on q, which records into rec; a recorded launch has no event (op
// opSubmit). skip is as for beginTask.
func (q *Queue) recordLaunch(rec *recording, k *kernelObject, inst *Kernel, r *Range, dw []driver.Event, op launchOp, skip int) error {
	if err := k.recordable(*r); err != nil {
		return err
	}
	var specs []progcache.SpecValue
	if inst != nil {
		specs = inst.specs
	}
	if err := rec.recordKernel(q, k, specs, *r, dw, op, skip+1); err != nil {
		return fmt.Errorf("%s kernel %q: %w", op, k.name, err)
	}
	return nil
}

// checkLaunch checks a launch of the kernel object k over r on q after
// wait before the driver sees it, and returns the driver events of wait:
// inst, if not nil, is the spec's instance of k, whose setters kept their
// first error and whose hidden arguments it binds (inside q's enter: Close
// must not free the globals' storage while they are bound); else k is a
// raw kernel's, whose arguments must all have been set, and their memory
// not freed since (checkRaw).
// Where the driver's own choice of work-group size could break the
// device's limits, it sets r's (kernelObject.checkRange).
func (q *Queue) checkLaunch(k *kernelObject, inst *Kernel, r *Range, wait []*Event, op launchOp) ([]driver.Event, error) {
	if inst != nil {
		if err := inst.prepare(q); err != nil {
			return nil, err
		}
	}
	if k.ctx != q.ctx {
		return nil, k.failed(op, q.ctx.sameContext("the kernel", k.prog.ctx))
	}
	if err := k.checkRange(q, r); err != nil {
		return nil, k.failed(op, err)
	}
	var dw []driver.Event
	if len(wait) > 0 {
		var err error
		if dw, err = q.driverEvents(wait); err != nil {
			return nil, k.failed(op, err)
		}
	}
	if inst == nil {
		if err := k.checkRaw(op.String()); err != nil {
			return nil, err
		}
	}
	return dw, nil
}

// errNoInstance is the error of a spec's launch (SubmitSpec, LaunchSpec)
// of a kernel that Acquire did not return.
func errNoInstance() error {
	return fmt.Errorf("enqueue: %w: no kernel from Acquire", ErrInvalidArgument)
}

// prepare returns the first error of setting the arguments, wrapped, or
// binds the hidden arguments of k.
func (k *Kernel) prepare(q *Queue) error {
	if k.setErr != nil {
		return fmt.Errorf("enqueue %s: %w", k.decl.ID, k.setErr)
	}
	if q == nil {
		return fmt.Errorf("enqueue %s: %w: nil queue", k.decl.ID, ErrInvalidArgument)
	}
	if k.nglobals > 0 {
		if err := k.bindHidden(q); err != nil {
			return fmt.Errorf("enqueue %s: %w", k.decl.ID, err)
		}
	}
	return nil
}

// bindHidden sets the hidden arguments to the storage of the kernel's
// device globals on q's device. Called by the instance's owner, the
// goroutine between Acquire and park (instance.go), which holds no lock.
func (k *Kernel) bindHidden(q *Queue) error {
	dev := q.dev.index
	if k.hidden == nil {
		k.hidden = make([][]*Mem, len(q.ctx.devices))
	}
	mems := k.hidden[dev]
	if mems == nil {
		// The instance keeps the storage once its zero fills have
		// completed: until then only q is ordered after them, and a launch
		// of the instance on another queue must order that queue too.
		ready := true
		for _, g := range k.decl.Globals {
			m, filled, err := q.globalMem(g, k.decl.Program)
			if err != nil {
				return err
			}
			mems = append(mems, m)
			ready = ready && filled
		}
		if ready {
			k.hidden[dev] = mems
		}
	}
	base := k.decl.Params
	for i, m := range mems {
		if err := k.setBuffer(base+i, m); err != nil {
			return err
		}
	}
	return nil
}
