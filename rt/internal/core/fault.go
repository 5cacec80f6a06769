package core

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
)

// faultState is a context's fault state: the device fault it recorded,
// and the debug setting of Config.SyncLaunches.
type faultState struct {
	// recorded is the device fault that the context recorded, once, and
	// returns from every call after it (failed): it goes from nil to the
	// fault once.
	recorded atomic.Pointer[DeviceFault]
	// syncLaunches is Config.SyncLaunches, and launchPCs whether launch
	// logs record the Go line of each launch (with syncLaunches): set by
	// OpenConfig and never changed after.
	syncLaunches, launchPCs bool
	// launchMu is held, under syncLaunches, from a launch until its queue
	// finished (beginLaunch, endLaunch): the one lock of the launch path
	// held across a driver call.
	launchMu sync.Mutex
}

// Device faults: the fault a context records, the launches it names, the
// debug setting that makes it name exactly one (Config.SyncLaunches), and
// the process's record of the devices lost to faults, which Open consults.
//
// The states of a context: open, faulted, closed (and closed after a
// fault). The first error of a driver call that wraps ErrDeviceFault moves
// an open context to faulted (Context.failed): the context keeps that
// error, with the launches that were in flight, as its *DeviceFault, once;
// from then on enter returns it at once, so every call fails without a
// driver call, and Close releases what the context holds without waiting
// for the device. The device is marked lost on its backend for the rest
// of the process (processFaults): neither backend recovers in the same
// process (measured on an H200, driver 580: after a fault CUDA's
// cuDevicePrimaryCtxReset succeeds and every later retain or cuCtxCreate
// of the device fails; NVIDIA's clCreateContext returns -9999), but each
// backend's fault is its own, so Open under BackendAuto opens the device
// on the other backend.
//
// Costs on the path of a context that has not faulted: enter loads the
// fault pointer beside the closed flag (one atomic load); a launch adds
// its kernel to its queue's launch log (an atomic add, and an atomic
// store of a pointer unless the slot holds it already, no allocation); a blocking transfer or Finish marks the
// log synchronised (an atomic load and, when it advances, a
// compare-and-swap).

// Err returns nil while the context works. Once a device fault has been
// recorded it returns the *DeviceFault (errors.Is(err, ErrDeviceFault)),
// which every later call returns too, and Close. After Close without a
// fault it returns an error wrapping ErrClosed.
func (c *Context) Err() error {
	if c == nil {
		return fmt.Errorf("context: %w: nil context", ErrInvalidArgument)
	}
	if f := c.fault.recorded.Load(); f != nil {
		return f
	}
	if c.closed.Load() {
		return fmt.Errorf("context: %w", ErrClosed)
	}
	return nil
}

// failed is the error path of a call that used the driver for q (nil for
// a call of the context as a whole): it returns err, unless err wraps
// ErrDeviceFault; then it records the context's fault, if none was
// recorded before, and returns the fault, which names the call that
// noticed it first.
func (c *Context) failed(q *Queue, err error) error {
	if err == nil || !errors.Is(err, ErrDeviceFault) {
		return err
	}
	if f := c.fault.recorded.Load(); f != nil {
		return f
	}
	qs := c.queues.snapshot()
	return c.recordFault(qs, q, err)
}

// recordFault is failed given qs, the context's queues: a snapshot
// (failed), or all of them, which Close took away; the launches in flight
// are those of qs.
func (c *Context) recordFault(qs []*Queue, q *Queue, err error) error {
	if err == nil || !errors.Is(err, ErrDeviceFault) {
		return err
	}
	if f := c.fault.recorded.Load(); f != nil {
		return f
	}
	devs := c.devices
	if q != nil {
		devs = []*Device{q.dev}
	}
	f := &DeviceFault{Backend: c.backend, Device: deviceLabels(devs), Err: err, Exact: c.fault.syncLaunches, Time: time.Now()}
	f.Launches, f.Omitted = suspects(qs, devs)
	if !c.fault.recorded.CompareAndSwap(nil, f) {
		return c.fault.recorded.Load()
	}
	for _, d := range devs {
		markLost(c.backend, d.info, f)
	}
	c.wakeBudgets() // allocations waiting for a free fail with the fault
	return f
}

// faultErr returns the context's fault, or nil.
func (c *Context) faultErr() error {
	if f := c.fault.recorded.Load(); f != nil {
		return f
	}
	return nil
}

// faulted reports whether the context recorded a device fault.
func (c *Context) faulted() bool { return c.fault.recorded.Load() != nil }

// deviceLabels names devs as Device.String does, joined.
func deviceLabels(devs []*Device) string {
	s := make([]string, len(devs))
	for i, d := range devs {
		s[i] = d.String()
	}
	return strings.Join(s, ", ")
}

// launchLogSize is the number of launches a queue's log keeps.
const launchLogSize = 64

// launchLog is a queue's record of its recent launches, which a fault
// names: a ring of the last launchLogSize, with the count of launches
// recorded (n) and the count as it was when the queue's last completed
// synchronisation began (synced): the launches after it are in flight.
//
// Writers are the launching goroutines, without a lock: add takes the
// next count and stores the launch's site in its slot. A fault reads the
// log while launches may go on: what it reads is the state of the moment,
// and a slot whose count was taken but not yet stored names the launch
// 64 before it.
type launchLog struct {
	n      atomic.Uint64
	synced atomic.Uint64
	ring   [launchLogSize]atomic.Pointer[launchSite]
	// pcs are the program counters of the Go calls that enqueued the
	// launches of ring, slot by slot, where the context records them
	// (faultState.launchPCs); zero otherwise.
	pcs [launchLogSize]atomic.Uintptr
}

// launchSite is what a launch log keeps of a launch: the kernel and its
// program, or a graph and its kernels. Immutable: a Kernel and a Graph
// hold theirs, which every launch of theirs stores.
type launchSite struct {
	kernel, program string
}

// add records a launch of s, enqueued from pc (0 for not recorded), and
// returns its count.
func (l *launchLog) add(s *launchSite, pc uintptr) uint64 {
	n := l.n.Add(1)
	// A loop that launches one kernel finds its site in the slot already,
	// stored there launchLogSize launches before: a load costs a launch
	// less than a store, which is an exchange with a write barrier.
	if slot := &l.ring[n%launchLogSize]; slot.Load() != s {
		slot.Store(s)
	}
	if pc != 0 {
		l.pcs[n%launchLogSize].Store(pc)
	}
	return n
}

// drop removes the launch that add recorded as s with count n from the
// log, unless a later launch took its slot: one of another site (no
// launch of s's kernel object or graph can come between, since one
// goroutine owns it for the launch), or none. The count keeps it.
func (l *launchLog) drop(n uint64, s *launchSite) {
	l.ring[n%launchLogSize].CompareAndSwap(s, nil)
}

// mark returns the count that a synchronisation beginning now covers.
func (l *launchLog) mark() uint64 { return l.n.Load() }

// synchronised notes that every launch up to count n has completed.
func (l *launchLog) synchronised(n uint64) { storeMax(&l.synced, n) }

// inFlight returns the launches recorded after the last synchronisation,
// oldest first, at most launchLogSize, with their pcs, and the number
// left out.
func (l *launchLog) inFlight() (sites []*launchSite, pcs []uintptr, omitted int) {
	n, from := l.n.Load(), l.synced.Load()
	if n <= from {
		return nil, nil, 0
	}
	if n-from > launchLogSize {
		omitted = int(n - from - launchLogSize)
		from = n - launchLogSize
	}
	for i := from + 1; i <= n; i++ {
		if s := l.ring[i%launchLogSize].Load(); s != nil {
			sites = append(sites, s)
			pcs = append(pcs, l.pcs[i%launchLogSize].Load())
		}
	}
	return sites, pcs, omitted
}

// suspects returns the launches in flight on the queues qs on devs, and
// how many were left out: every queue of a device is suspect, since a
// fault poisons the device's context whichever queue noticed it.
func suspects(qs []*Queue, devs []*Device) ([]SuspectLaunch, int) {
	var out []SuspectLaunch
	omitted := 0
	for _, q := range allQueues(qs) {
		if !slices.Contains(devs, q.dev) {
			continue
		}
		sites, pcs, n := q.log.inFlight()
		omitted += n
		for i, s := range sites {
			l := SuspectLaunch{Queue: q.id, Kernel: s.kernel, Program: s.program}
			if pcs[i] != 0 {
				fr, _ := runtime.CallersFrames(pcs[i : i+1]).Next()
				l.File, l.Line = fr.File, fr.Line
			}
			out = append(out, l)
		}
	}
	return out, omitted
}

// callerPC returns the program counter of the frame depth frames above
// callerPC's caller (0: the caller itself).
func callerPC(depth int) uintptr {
	var pc [1]uintptr
	if runtime.Callers(depth+2, pc[:]) == 0 {
		return 0
	}
	return pc[0]
}

// beginLaunch records a launch of site on q before the driver sees it;
// skip is as for beginTask. Under Config.SyncLaunches it first takes the
// context's launch lock, which endLaunch releases, so that launches are
// serialised and one kernel at a time runs, and it records the caller's
// line (faultState.launchPCs), which a fault names.
func (q *Queue) beginLaunch(site *launchSite, skip int) launchRec {
	c := q.ctx
	if !c.fault.launchPCs {
		return launchRec{q.log.add(site, 0), site}
	}
	if c.fault.syncLaunches {
		c.fault.launchMu.Lock()
	}
	return launchRec{q.log.add(site, callerPC(skip+3)), site} // the user's call: skip frames and the facade's above beginLaunch's caller
}

// launchRec is a launch that beginLaunch recorded: its count and site.
type launchRec struct {
	n    uint64
	site *launchSite
}

// endLaunch ends a launch r that beginLaunch began, whose enqueue
// returned err: a launch that failed to enqueue is not in
// flight, and leaves the log. Under Config.SyncLaunches it waits for the
// launch (the queue's Finish), marks the log synchronised and releases
// the launch lock; it returns the error of the wait, or err.
func (q *Queue) endLaunch(r launchRec, err error) error {
	if err == nil && !q.ctx.fault.syncLaunches {
		return nil
	}
	return q.endLaunchSlow(r, err)
}

// endLaunchSlow is endLaunch for a launch that failed, or under
// Config.SyncLaunches.
func (q *Queue) endLaunchSlow(r launchRec, err error) error {
	if err != nil {
		q.log.drop(r.n, r.site)
	}
	c := q.ctx
	if !c.fault.syncLaunches {
		return err
	}
	defer c.fault.launchMu.Unlock()
	if err != nil {
		return err
	}
	if err := q.drv.Finish(); err != nil {
		return fmt.Errorf("synchronise after the launch (Config.SyncLaunches) on %q: %w", q.dev.Name, err)
	}
	q.log.synchronised(r.n)
	return nil
}

// processFaults records, for the process, the devices that each backend
// lost to a fault: Open refuses them on that backend (the error says that
// the process must restart to use the device there again), and under
// BackendAuto opens the device on another backend.
var processFaults struct {
	mu sync.Mutex
	m  map[lostKey]*DeviceFault
}

// lostKey names a device on a backend for processFaults.
type lostKey struct {
	backend         string
	platform, index int
	name            string
}

func lostKeyOf(backend string, d driver.DeviceInfo) lostKey {
	return lostKey{backend: backend, platform: d.PlatformIndex, index: d.Index, name: d.Name}
}

// markLost records that backend lost d to the fault f, unless it was
// recorded lost before.
func markLost(backend string, d driver.DeviceInfo, f *DeviceFault) {
	processFaults.mu.Lock()
	defer processFaults.mu.Unlock()
	if processFaults.m == nil {
		processFaults.m = make(map[lostKey]*DeviceFault)
	}
	k := lostKeyOf(backend, d)
	if _, ok := processFaults.m[k]; !ok {
		processFaults.m[k] = f
	}
}

// lostError returns an error wrapping ErrDeviceFault if backend lost one
// of devs to a fault earlier in the process, else nil.
func lostError(backend string, devs []driver.DeviceInfo) error {
	processFaults.mu.Lock()
	defer processFaults.mu.Unlock()
	for _, d := range devs {
		if f := processFaults.m[lostKeyOf(backend, d)]; f != nil {
			return fmt.Errorf("open context on %s: backend %s lost the device to a fault earlier in this process (%s), and no backend recovers from one in the same process: restart the process to use it on %s again: %w",
				d.Label(), backend, f.Time.Format(time.RFC3339), backend, f)
		}
	}
	return nil
}

// openFault records that backend lost devs when opening a context on
// them failed with err, an error wrapping ErrDeviceFault (a device that
// faulted outside rt's knowledge, or whose loss rt did not see), and
// returns err.
func openFault(backend string, devs []driver.DeviceInfo, err error) error {
	f := &DeviceFault{Backend: backend, Err: err, Time: time.Now()}
	var labels []string
	for _, d := range devs {
		labels = append(labels, d.Label())
	}
	f.Device = strings.Join(labels, ", ")
	for _, d := range devs {
		markLost(backend, d, f)
	}
	return err
}

// warnFallback logs, through logger (slog.Default() if nil), that Open
// under BackendAuto skipped backends that lost the device and opened it
// on backend.
func warnFallback(logger *slog.Logger, backend string, devs []driver.DeviceInfo, skipped []string) {
	if logger == nil {
		logger = slog.Default()
	}
	var labels []string
	for _, d := range devs {
		labels = append(labels, d.Label())
	}
	logger.Warn("dgen: the device faulted on another backend earlier in this process, which cannot use it again until the process restarts; opened it on "+backend,
		"device", strings.Join(labels, ", "), "lost on", strings.Join(skipped, ", "), "backend", backend)
}

// allQueues returns qs and their views (Queue.WithSpec), whose launches
// each keep a launch log of their own.
func allQueues(qs []*Queue) []*Queue {
	out := qs
	for _, q := range qs {
		if vs := q.viewsOf(); len(vs) > 0 {
			if len(out) == len(qs) {
				out = slices.Clone(qs)
			}
			out = append(out, vs...)
		}
	}
	return out
}
