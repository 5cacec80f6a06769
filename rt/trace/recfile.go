package trace

import (
	"errors"
	"fmt"
	stdslog "log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// A record file's path belongs to the people who run the program as much
// as to the tracer: logrotate truncates it (copytruncate) or renames it
// away, a cleanup removes it, a second process or context is started with
// the same DGEN_TRACE. None of that may crash the process, and none may
// lose a trace without a word. Three mechanisms see to it:
//
//   - Every access to a mapping runs under guard, with the runtime's
//     panic-on-fault set (runtime/debug.SetPanicOnFault): the SIGBUS of a
//     store past the end of a truncated file becomes a panic that guard
//     recovers, dropping the record (counted) and marking the generation
//     damaged.
//   - A watcher goroutine per file looks, once a second and whenever a
//     writer finds damage, whether the file is shorter than what it backed,
//     has lost its header, or is no longer the file at its path (moved away
//     or removed). If so it retires the generation (its mapping is detached
//     first, so that late stores cannot reach the new file) and starts a new
//     one at the path: a fresh header, the nodes defined so far, and the
//     queues, devices and strings again as they are used. One warning goes
//     to the Tracer's logger. A file moved away keeps the records written
//     before, convertible by dgen trace json.
//   - The path is locked (pathLock) before it is truncated: a second
//     tracer, in this process or another, is refused with an error wrapping
//     ErrBusy, and never truncates or renames over the first one's file.

// watchEvery is how often a watcher looks at its file; a variable for
// tests.
var watchEvery = time.Second

// recFile is a record file of the perfetto or flight subscriber: the
// generation its writers use now, and the watcher that replaces that
// generation when the file is truncated, moved or removed.
type recFile struct {
	gen   atomic.Pointer[recGen] // the generation writers use; never nil
	drops *atomic.Uint64         // the Tracer's drop counter, or nil
	lost  atomic.Uint64          // records lost to faults since the last new generation
	kick  chan struct{}          // wakes the watcher: buffered, a send never blocks

	path   string
	ring   uint64 // ring bytes of a flight recorder, 0 for a growing log
	start  int64  // the Tracer's start, Unix nanoseconds
	lock   *pathLock
	tracer atomic.Pointer[Tracer] // whose nodes a new generation defines; set by Subscribe
	done   chan struct{}          // closed to stop the watcher
	gone   chan struct{}          // closed by the watcher as it returns; nil without one

	mu      sync.Mutex // serialises checks and Close; guards the fields below
	name    string     // the path of the current generation's file: path, or path.ring after a flight dump
	stopped error      // set while no new generation could be made (warned once)
	renamed bool       // the last look found the file renamed and nothing at name
	closed  bool
}

// newRecFile locks path and creates the record file there for t (nil for
// a flight recorder made by NewFlightRecorder). A relative path is made
// absolute now: the watcher, a new generation, a dump and Close's JSON
// use the file that was opened, whatever the working directory is later.
func newRecFile(path string, ring uint64, t *Tracer) (*recFile, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	lock, err := lockPath(path)
	if err != nil {
		return nil, err
	}
	r := &recFile{path: path, name: path, ring: ring, lock: lock, kick: make(chan struct{}, 1), done: make(chan struct{})}
	if t != nil {
		r.start = t.start.UnixNano()
		r.drops = &t.drops
		r.tracer.Store(t)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		var g *recGen
		if g, err = openGen(f, ring, r.start, r); err == nil {
			r.gen.Store(g)
		}
	}
	if err != nil {
		lock.release()
		return nil, err
	}
	if !r.gen.Load().anon {
		r.gone = make(chan struct{})
		go r.watch()
	}
	return r, nil
}

// attach makes t the Tracer whose nodes a new generation defines.
func (r *recFile) attach(t *Tracer) { r.tracer.CompareAndSwap(nil, t) }

// The writers: each loads the generation once and writes under the fault
// guard. They are the hot path of the perfetto and flight subscribers.

func (r *recFile) taskRec(kind uint8, tk *Task) {
	g := r.gen.Load()
	old := debug.SetPanicOnFault(true)
	defer r.endWrite(g, old)
	g.taskRec(kind, tk)
}

func (r *recFile) edge(to, from *Task, implicit bool) {
	g := r.gen.Load()
	old := debug.SetPanicOnFault(true)
	defer r.endWrite(g, old)
	g.edge(to, from, implicit)
}

func (r *recFile) memRec(d *Device, k Kind, m *Mem, now int64) {
	g := r.gen.Load()
	old := debug.SetPanicOnFault(true)
	defer r.endWrite(g, old)
	g.memRec(d, k, m, now)
}

func (r *recFile) handle(e *Event) {
	g := r.gen.Load()
	old := debug.SetPanicOnFault(true)
	defer r.endWrite(g, old)
	g.handle(e)
}

func (r *recFile) defineNode(n *Node) {
	g := r.gen.Load()
	old := debug.SetPanicOnFault(true)
	defer r.endWrite(g, old)
	g.defineNode(n)
}

// endWrite ends a writer's guarded access to g: a fault on g's mapping
// drops the record and wakes the watcher; any other panic goes on.
func (r *recFile) endWrite(g *recGen, old bool) {
	debug.SetPanicOnFault(old)
	if e := recover(); e != nil {
		if !g.faultIn(e) {
			panic(e)
		}
		r.lost.Add(1)
		if r.drops != nil {
			r.drops.Add(1)
		}
		g.damaged()
	}
}

// faultIn reports whether e is the panic of a fault on g's mapping.
func (g *recGen) faultIn(e any) bool {
	a, ok := e.(interface{ Addr() uintptr })
	if !ok || g.mem == nil {
		return false
	}
	base := uintptr(g.mem)
	return a.Addr() >= base && a.Addr()-base < uintptr(g.size)
}

// damaged marks g's file as truncated under it and wakes the watcher.
func (g *recGen) damaged() {
	g.bad.Store(true)
	if r := g.owner; r != nil {
		r.wake()
	}
}

func (r *recFile) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// guard runs f, which reads or writes g's mapping, with faults turned into
// panics; a fault on the mapping marks g damaged and is returned as an
// error. It is for the cold paths: opening, the watcher, Close, dumps.
func guard(g *recGen, f func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if e := recover(); e != nil {
			if !g.faultIn(e) {
				panic(e)
			}
			g.bad.Store(true)
			err = errTruncated
		}
	}()
	f()
	return nil
}

var errTruncated = errors.New("the file was truncated under its mapping")

// watch is the watcher goroutine: it checks the file once every
// watchEvery, and when a writer wakes it.
func (r *recFile) watch() {
	defer close(r.gone)
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.kick:
		case <-tick.C:
		case <-r.done:
			return
		}
		r.mu.Lock()
		r.checkLocked()
		r.mu.Unlock()
	}
}

// checkLocked replaces the current generation by a new one at r.name when
// its file was truncated, moved away or removed, or when an earlier
// attempt failed; it warns once for each such change.
func (r *recFile) checkLocked() {
	g := r.gen.Load()
	if r.closed || g.anon {
		return
	}
	why := ""
	if !g.closed.Load() {
		why = r.inspect(g)
		if why == "" {
			r.renamed = false
			r.lock.check() // a lock file removed by a cleanup is made again at once
			return
		}
		if _, err := os.Lstat(r.name); why == "moved away" && err != nil && !r.renamed {
			// Renamed, and nothing at the path yet: logrotate may be
			// about to create the file. Writers go on in the renamed
			// file until the next look.
			r.renamed = true
			return
		}
		r.renamed = false
	} else if r.stopped == nil {
		return // retired by Close
	}
	g.unmap()
	lost := r.lost.Load()
	err := r.lock.check()
	if err == nil {
		err = r.renew()
	}
	log := r.logger()
	switch {
	case err == nil && why == "":
		log.Info("dgen: trace file made again; the trace starts again in it", "path", r.name)
	case err == nil:
		log.Warn("dgen: trace file "+why+" while the program ran; the trace starts again in it", "path", r.name, "lost", lost)
	case r.stopped == nil:
		log.Warn("dgen: trace file "+why+" while the program ran and cannot be made again; events are dropped until it can", "path", r.name, "err", err)
	}
	if err != nil {
		if r.stopped == nil {
			r.stopped = fmt.Errorf("trace file %s and cannot be made again: %w", why, err)
		}
		return
	}
	r.stopped = nil
}

// inspect says what happened to g's file: "truncated", "moved away",
// "removed", or "" when it is whole and at r.name.
func (r *recFile) inspect(g *recGen) string {
	lim := g.limit.Load() // before the file's size: it grows first
	magic := false
	if err := guard(g, func() { magic = string((*[8]byte)(g.mem)[:]) == logMagic }); err != nil || !magic || g.bad.Load() || g.shrunk(lim) {
		return "truncated"
	}
	return g.moved(r.name)
}

// renew starts a new generation at r.name, the current one retired: the
// file is created again, empty, with the nodes defined so far.
func (r *recFile) renew() error {
	f, err := os.OpenFile(r.name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	g, err := openGen(f, r.ring, r.start, r)
	if err != nil {
		return err
	}
	lost := r.lost.Swap(0)
	err = guard(g, func() {
		if lost > 0 {
			g.countDrops(lost)
		}
		t := r.tracer.Load()
		if t == nil {
			r.gen.Store(g)
			return
		}
		// Under t.mu no node is created: each is in the new generation,
		// from this replay or from newNode after the swap.
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, n := range t.nodeList {
			g.defineNode(n)
		}
		r.gen.Store(g)
	})
	if err != nil && r.gen.Load() != g {
		g.unmap()
	}
	return err
}

// logger returns the logger of r's Tracer, or stdslog.Default().
func (r *recFile) logger() *stdslog.Logger {
	if t := r.tracer.Load(); t != nil && t.log != nil {
		return t.log
	}
	return stdslog.Default()
}

// stopWatch stops the watcher and waits for it to return.
func (r *recFile) stopWatch() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	if r.gone != nil {
		<-r.gone
	}
}

// closeLocked retires the current generation and releases the path.
func (r *recFile) closeLocked() error {
	r.closed = true
	err := r.gen.Load().unmap()
	r.lock.release()
	return err
}

// countDrops adds n to the drop count in g's header.
func (g *recGen) countDrops(n uint64) {
	atomic.AddUint64(g.word(0, hdrDrops/8), n)
}
