package cuda

/*
#cgo noescape dgen_cupti_take
#cgo nocallback dgen_cupti_take
#include <stdlib.h>
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// Kernel times from CUPTI. A queue that times every command
// (context.NewKernelTimedQueue) takes its kernels' device times from
// CUPTI's activity records where libcupti loads, instead of from a timed
// event before and after each launch. A kernel launched with an event
// records an untimed end event for its waits; one whose event is wanted
// only for its times (LaunchArgsTimed) records none. On the H100 (a C
// probe, bench/cuptiprobe in git history) a launch costs 7–19% more with
// CUPTI's record and 63% more with two timed events; and the record holds
// the kernel's own start and end, where the events count the launch's
// latency while the GPU waits for the host (4.9 µs for a kernel of
// 1.95 µs).
//
// CUPTI's kernel records are process-wide: while a kernel-timed queue is
// open, CUPTI is attached to the process and records every kernel it
// launches (the records of other streams are dropped here), and every
// launch of the process costs more: about 1 µs on the H100's host, in
// BenchmarkTraceCost. The release of the last kernel-timed queue detaches
// CUPTI (cuptiFinalize), which takes that cost away.
//
// Matching. The records of a stream come in the order its kernels ran. A
// kernel-timed queue lists the kernels it launched, in order (launches on
// it are serialized so that the list's order is the stream's), and gives
// each record to the oldest kernel without one, after checking its grid
// and block. A record that does not match, or records that CUPTI lost,
// mean that the queue cannot tell which kernel a record belongs to: its
// kernel times are lost, and its kernels report an error (no device
// time), never another kernel's time.
//
// Clock. CUPTI's times are the host's wall clock. They are turned into the
// backend's device clock (the anchor's) in two steps: wall clock to time
// since processStart, with the offset between Go's wall and monotonic
// clocks read when the records are taken; then the queue's offset between
// that and the anchor's clock, measured once from its first timed kernel,
// whose end event is a timed one recorded just after it.

// cuptiLibraries lists the libraries tried, in order: the loader's
// libcupti.so, then the CUDA toolkit's. rt.Config.CUPTILibrary
// (DGEN_CUPTI_LIBRARY), which rt passes in driver.Options, names the one to
// use instead, or "none" to keep CUPTI unused.
func cuptiLibraries() []string {
	if v := driver.Configured().CUPTILibrary; v != "" {
		return []string{v}
	}
	return []string{"libcupti.so", "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"}
}

// minCUPTIVersion is the oldest CUPTI API (cuptiGetVersion: 17 is CUDA
// 12.0) whose kernel records dgen_cupti.c reads.
const minCUPTIVersion = 17

// cupti is the process's use of CUPTI. Its lock guards the fields below
// it and every kernelTimes' kernels, lost and calibration, and the
// kernelRecords they hold.
var cupti struct {
	once sync.Once
	err  error // why CUPTI is not used

	mu      sync.Mutex
	users   int                     // kernel-timed queues open
	streams map[uint32]*kernelTimes // by CUPTI stream id
	lost    uint64                  // records lost, as last read
	buf     []C.dgen_krec
}

// loadCUPTI loads the first of cuptiLibraries that opens, once; its error
// says why each did not.
func loadCUPTI() error {
	cupti.once.Do(func() {
		var errs []error
		for _, name := range cuptiLibraries() {
			err := openCUPTI(name)
			if err == nil {
				return
			}
			errs = append(errs, err)
		}
		cupti.err = errors.Join(errs...)
	})
	return cupti.err
}

func openCUPTI(name string) error {
	if name == "none" {
		return errors.New("DGEN_CUPTI_LIBRARY=none")
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var v C.uint32_t
	if msg := C.dgen_cupti_open(cname, &v); msg != nil {
		return fmt.Errorf("%s: %s", name, C.GoString(msg))
	}
	if v < minCUPTIVersion {
		return fmt.Errorf("%s: CUPTI API %d, older than %d", name, v, minCUPTIVersion)
	}
	return nil
}

// notReady reports whether err is CUDA_ERROR_NOT_READY.
func notReady(err error) bool {
	var de *driver.Error
	return errors.As(err, &de) && de.Code == C.DGEN_CUDA_ERROR_NOT_READY
}

func cuptiError(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	name := fmt.Sprintf("CUPTI_ERROR(%d)", int(r))
	if s := C.dgen_cupti_error(r); s != nil {
		name = C.GoString(s)
	}
	return &driver.Error{Call: call, Code: int32(r), Name: name}
}

// kernelTimes is the kernel times of a kernel-timed queue.
type kernelTimes struct {
	q        *queue
	stream   uint32
	launch   sync.Mutex    // held across a launch and its entry in kernels
	launched atomic.Uint64 // kernels listed so far; the newest one's seq

	// Guarded by cupti.mu:
	kernels []*kernelRecord // launched, without a record yet, oldest first
	lost    error           // set once records can no longer be matched
	calib   *kernelRecord   // the kernel whose end event measures offset
	offset  int64           // anchor clock - time since processStart
	known   bool            // offset is measured
}

// kernelRecord is what a kernel-timed queue knows of one of its kernels.
// Its fields are guarded by cupti.mu.
type kernelRecord struct {
	seq        uint64 // launched.Add(1) at its launch
	dims       [6]C.int
	start, end int64 // since processStart, once done
	done       bool  // start and end are set, or err
	err        error
	timedEnd   *cuEvent // the calibration kernel's end event, held until used
}

// openKernelTimes makes q kernel-timed: it enables CUPTI's kernel records
// if q is the first such queue, and finds q's stream id.
func openKernelTimes(q *queue) (*kernelTimes, error) {
	if err := loadCUPTI(); err != nil {
		return nil, err
	}
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	if cupti.users == 0 {
		if err := cuptiError("cuptiActivityEnable", C.dgen_cupti_enable()); err != nil {
			return nil, err
		}
		cupti.streams = make(map[uint32]*kernelTimes)
	}
	cupti.users++
	kt := &kernelTimes{q: q}
	var id C.uint32_t
	if err := cuptiError("cuptiGetStreamIdEx", C.dgen_cupti_stream(q.d.ctx, q.s, &id)); err != nil {
		kt.closeLocked()
		return nil, err
	}
	kt.stream = uint32(id)
	cupti.streams[kt.stream] = kt
	return kt, nil
}

// close stops q's kernel times, once its stream has finished: the last
// queue disables CUPTI's records.
func (kt *kernelTimes) close() {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	kt.flushLocked(kt.launched.Load())
	kt.closeLocked()
}

func (kt *kernelTimes) closeLocked() {
	if cupti.streams[kt.stream] == kt {
		delete(cupti.streams, kt.stream)
	}
	kt.loseLocked(errors.New("CUPTI kernel times: the queue is released"))
	if kt.calib != nil {
		kt.calib.timedEnd.unref()
		kt.calib = nil
	}
	if cupti.users--; cupti.users == 0 {
		C.dgen_cupti_disable()
		pumpLocked() // drop what is left
	}
}

// launchKernel launches k with shape l on kt's queue, listing it: one cgo
// call, with an untimed end event for mode withEvent. The queue's first
// kernel with an event gets a timed end event, which measures the clock
// offset.
func (kt *kernelTimes) launchKernel(k *kernel, l launchShape, wait []driver.Event, mode eventMode) (driver.Event, error) {
	q := kt.q
	q.d.gate.pass()
	var wb [8]C.CUevent
	wl, wp, err := waitEvents(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	kt.launch.Lock()
	defer kt.launch.Unlock()
	var ev *kernelEvent
	var rec *kernelRecord
	if mode != noEvent {
		ev = &kernelEvent{kt: kt}
		rec = &ev.rec // one allocation
	} else {
		rec = new(kernelRecord)
	}
	rec.dims = dimsOf(l.grid, l.block)
	var end *cuEvent
	if calib := mode != noEvent && kt.wantsCalibration(); calib || mode == withEvent {
		pool := &q.d.plain
		if calib {
			pool = &q.d.timed
		}
		if end, err = pool.get(); err != nil {
			return nil, err
		}
		if calib {
			end.refs.Add(1)
			rec.timedEnd = end
		}
	}
	kt.add(rec)
	var step C.int
	res := C.dgen_launch(q.d.ctx, k.fns[q.dev], l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
		l.shared, q.s, k.paramArray(), C.int(len(wl)), wp, 0, handle(end), &step)
	if res != 0 {
		if step != C.STEP_RECORD_END { // else the kernel runs: its record comes
			kt.remove(rec)
		}
		end.unref()
		return nil, stepError("cuLaunchKernel", step, res)
	}
	if mode == noEvent {
		return nil, nil
	}
	ev.end = end
	return ev, nil
}

// wantsCalibration reports whether the next timed kernel should measure
// the clock offset.
func (kt *kernelTimes) wantsCalibration() bool {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	return !kt.known && kt.calib == nil && kt.lost == nil
}

// add lists rec as the newest kernel of kt (or fails it at once if kt's
// times are lost).
func (kt *kernelTimes) add(rec *kernelRecord) {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	if rec.timedEnd != nil {
		kt.calib = rec
	}
	rec.seq = kt.launched.Add(1)
	if kt.lost != nil {
		rec.done, rec.err = true, kt.lost
		return
	}
	kt.kernels = append(kt.kernels, rec)
}

// remove unlists rec, the newest kernel, whose launch failed.
func (kt *kernelTimes) remove(rec *kernelRecord) {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	if n := len(kt.kernels); n > 0 && kt.kernels[n-1] == rec {
		kt.kernels[n-1] = nil
		kt.kernels = kt.kernels[:n-1]
	}
	if kt.calib == rec {
		kt.calib = nil
		rec.timedEnd.unref()
	}
}

// loseLocked fails kt's listed kernels and every later one with err.
func (kt *kernelTimes) loseLocked(err error) {
	if kt.lost == nil {
		kt.lost = err
	}
	for _, r := range kt.kernels {
		r.done, r.err = true, kt.lost
	}
	clear(kt.kernels)
	kt.kernels = kt.kernels[:0]
}

// pumpLocked takes the records CUPTI has delivered and gives each to its
// queue's oldest listed kernel.
func pumpLocked() {
	if cupti.buf == nil {
		cupti.buf = make([]C.dgen_krec, 512)
	}
	var lost C.ulonglong
	for {
		n := int(C.dgen_cupti_take(&cupti.buf[0], C.int(len(cupti.buf)), &lost))
		if n == 0 {
			break
		}
		now := time.Now()
		wall := now.UnixNano() - int64(now.Sub(processStart)) // wall clock at processStart
		for i := range n {
			r := &cupti.buf[i]
			if kt := cupti.streams[uint32(r.stream)]; kt != nil {
				kt.match(r, wall)
			}
		}
		if n < len(cupti.buf) {
			break
		}
	}
	if uint64(lost) > cupti.lost {
		err := fmt.Errorf("CUPTI kernel times: %d records lost", uint64(lost)-cupti.lost)
		cupti.lost = uint64(lost)
		for _, kt := range cupti.streams {
			kt.loseLocked(err)
		}
	}
	for _, kt := range cupti.streams {
		kt.calibrateLocked()
	}
}

// match gives r to kt's oldest listed kernel, if grid and block agree.
func (kt *kernelTimes) match(r *C.dgen_krec, wall int64) {
	if kt.lost != nil {
		return
	}
	if len(kt.kernels) == 0 {
		kt.loseLocked(errors.New("CUPTI kernel times: a record of a kernel the queue did not launch"))
		return
	}
	k := kt.kernels[0]
	if k.dims != r.dims {
		kt.loseLocked(fmt.Errorf("CUPTI kernel times: a record of grid and block %v where the queue launched %v", r.dims, k.dims))
		return
	}
	k.start, k.end, k.done = int64(r.start)-wall, int64(r.end)-wall, true
	kt.kernels[0] = nil
	kt.kernels = kt.kernels[1:]
}

// calibrateLocked measures kt's clock offset once its calibration kernel
// has its record and its timed end event has completed.
func (kt *kernelTimes) calibrateLocked() {
	c := kt.calib
	if c == nil || !c.done {
		return
	}
	if c.err == nil {
		_, end, err := kt.q.d.anchor.times(nil, c.timedEnd)
		if notReady(err) {
			return
		}
		if err == nil {
			kt.offset, kt.known = end-c.end, true
		} else {
			kt.loseLocked(fmt.Errorf("CUPTI kernel times: measure the clock: %w", err))
		}
	}
	c.timedEnd.unref()
	c.timedEnd, kt.calib = nil, nil
}

// settle is called when a command of kt's queue has completed, seq being
// kt.launched when it was enqueued: the kernels listed up to seq have
// completed too, and a flush hands over those of their records that CUPTI
// still holds back.
func (kt *kernelTimes) settle(seq uint64) {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	kt.flushLocked(seq)
}

// flushLocked takes the records CUPTI has delivered and, while a kernel
// listed up to seq (all of which have completed) is still without one,
// asks CUPTI for the records it holds back. CUPTI writes a kernel's record
// a little after the kernel has completed, so it asks again, waiting a
// little longer each time, for up to recordWait. It reports whether a
// kernel is still without its record.
func (kt *kernelTimes) flushLocked(seq uint64) (missing bool) {
	pumpLocked()
	for wait := 10 * time.Microsecond; ; wait *= 2 {
		waits := len(kt.kernels) > 0 && kt.kernels[0].seq <= seq || kt.calib != nil && kt.calib.seq <= seq
		if !waits {
			return false
		}
		if err := cuptiError("cuptiActivityFlushAll", C.dgen_cupti_flush()); err != nil {
			kt.loseLocked(err)
			return false
		}
		pumpLocked()
		if wait > recordWait {
			return true
		}
		cupti.mu.Unlock()
		time.Sleep(wait)
		cupti.mu.Lock()
	}
}

// recordWait bounds how long flushLocked waits for the record of a
// completed kernel.
const recordWait = 20 * time.Millisecond

// finish waits for kt's stream with launches held off: then every listed
// kernel has run, so one still without a record after flushLocked's wait
// will not get one, and kt's times are lost.
func (kt *kernelTimes) finish() error {
	kt.launch.Lock()
	defer kt.launch.Unlock()
	if err := cuError("cuStreamSynchronize", C.dgen_sync(kt.q.d.ctx, kt.q.s)); err != nil {
		return err
	}
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	if kt.flushLocked(kt.launched.Load()) {
		kt.loseLocked(fmt.Errorf("CUPTI kernel times: no record of %d finished kernels after %v", len(kt.kernels), recordWait))
	}
	return nil
}

// addGraph lists the kernels of g, about to be launched on kt's queue
// (kt.launch held). With evs not nil it puts an event for each kernel's
// times there; with calib not nil, the last kernel measures the clock
// offset against that timed event, recorded just after the graph.
func (kt *kernelTimes) addGraph(g *graph, evs []driver.Event, calib *cuEvent) {
	for i, k := range g.kernels {
		if k == nil {
			continue
		}
		c := g.cmd(i)
		rec := new(kernelRecord)
		if evs != nil {
			ev := &kernelEvent{kt: kt}
			rec, evs[i] = &ev.rec, ev
		}
		rec.dims = dimsOf(c.grid, c.block)
		if calib != nil && i == g.n-1 {
			calib.refs.Add(1)
			rec.timedEnd = calib
		}
		kt.add(rec)
	}
}

// timesKnown reports whether kt's clock offset is measured and its times
// are not lost, so that its kernels' records give times.
func (kt *kernelTimes) timesKnown() bool {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	return kt.known && kt.lost == nil
}

// dimsOf is a launch's grid and block as a CUPTI record gives them.
func dimsOf(grid, block [3]C.uint) [6]C.int {
	return [6]C.int{C.int(grid[0]), C.int(grid[1]), C.int(grid[2]), C.int(block[0]), C.int(block[1]), C.int(block[2])}
}

// lose fails kt's listed kernels and every later one with err.
func (kt *kernelTimes) lose(err error) {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	kt.loseLocked(err)
}

// kernelEvent is the driver.Event of a kernel on a kernel-timed queue: its
// end event (none for LaunchArgsTimed, but for the calibrating kernel),
// and its record.
type kernelEvent struct {
	kt       *kernelTimes
	rec      kernelRecord
	end      *cuEvent
	released atomic.Bool
}

func (e *kernelEvent) last() *cuEvent { return e.end }

// Wait blocks until the kernel has completed (without an end event, until
// the queue has finished), then has CUPTI hand over its record if it
// holds it back.
func (e *kernelEvent) Wait() error {
	var err error
	if e.end != nil {
		err = waitFor(e.end)
	} else {
		err = cuError("cuStreamSynchronize", C.dgen_sync(e.kt.q.d.ctx, e.kt.q.s))
	}
	if err != nil {
		return err
	}
	e.kt.settle(e.rec.seq)
	return nil
}

// Status returns StatusComplete or StatusSubmitted.
func (e *kernelEvent) Status() (driver.EventStatus, error) {
	if e.end == nil {
		cupti.mu.Lock()
		defer cupti.mu.Unlock()
		if e.rec.done {
			return driver.StatusComplete, nil
		}
		return driver.StatusSubmitted, nil
	}
	return statusOf(e.end)
}

// Span returns the kernel's times once its record has come and the
// queue's clock offset is known; a kernel whose times are lost is done
// with an error. It never waits, and never asks CUPTI for the records it
// holds back (a flush costs about 0.1 ms): Wait and the queue's Finish do.
func (e *kernelEvent) Span() (started, ended uint64, done bool, err error) {
	cupti.mu.Lock()
	defer cupti.mu.Unlock()
	if !e.rec.done || !e.kt.known {
		pumpLocked()
	}
	return e.spanLocked()
}

func (e *kernelEvent) spanLocked() (started, ended uint64, done bool, err error) {
	r, kt := &e.rec, e.kt
	switch {
	case r.done && r.err != nil:
		return 0, 0, true, r.err
	case !r.done || !kt.known:
		if kt.lost != nil {
			return 0, 0, true, kt.lost
		}
		return 0, 0, false, nil
	}
	s, t := r.start+kt.offset, r.end+kt.offset
	if s < 0 || t < s {
		return 0, 0, true, fmt.Errorf("CUPTI kernel times: times %d and %d out of order", s, t)
	}
	return uint64(s), uint64(t), true, nil
}

// Profile waits for the kernel and returns its times.
func (e *kernelEvent) Profile() (driver.Timing, error) {
	if err := e.Wait(); err != nil {
		return driver.Timing{}, err
	}
	s, t, done, err := e.Span()
	if err == nil && !done {
		err = errors.New("CUPTI kernel times: the clock offset is not measured yet")
	}
	if err != nil {
		return driver.Timing{}, err
	}
	return driver.Timing{Queued: s, Submitted: s, Started: s, Ended: t}, nil
}

// Release gives the end event back.
func (e *kernelEvent) Release() error {
	if !e.released.Swap(true) {
		e.end.unref()
	}
	return nil
}
