package trace

import (
	"sync/atomic"
	"unsafe"
)

// Prefaulting. The first store to a page of a record file's mapping faults:
// the kernel finds or allocates the page and maps it, some microseconds
// each, a fifth of a traced command's cost when the traced goroutine pays
// it (a 4 KiB page holds 64 records). A growing log (perfetto) therefore
// has a goroutine that faults the pages in ahead of the writers: the
// writers wake it each time the slots they reserve cross a multiple of
// prefaultStep, and it grows the file (see recFile.grow) and maps its pages
// up to prefaultAhead beyond the slots reserved.

const (
	prefaultStep  = 1 << 20 // bytes of records between wake-ups
	prefaultAhead = 8 << 20 // bytes faulted in beyond the slots reserved
	pageSize      = 4096
)

// prefaulter faults in the pages of a growing log ahead of its writers.
type prefaulter struct {
	g    *recGen
	kick chan struct{} // buffered: a wake-up is never lost, never blocks
	done chan struct{} // closed by stopPrefault
	gone chan struct{} // closed by the goroutine as it returns
	upto atomic.Uint64 // bytes faulted in so far, from the start of the mapping
	stop atomic.Bool
}

// startPrefault starts the prefaulter of g, a growing log.
func (g *recGen) startPrefault() {
	p := &prefaulter{g: g, kick: make(chan struct{}, 1), done: make(chan struct{}), gone: make(chan struct{})}
	g.pf = p
	p.kick <- struct{}{} // the first pages now
	go p.run()
}

// reserved is called by slog.reserve with the slots reserved before and
// after a reservation: it wakes the prefaulter when they cross a multiple
// of prefaultStep.
func (p *prefaulter) reserved(from, to uint64) {
	if from^to >= prefaultStep/slotSize { // a bit at or above the step's differs

		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

func (p *prefaulter) run() {
	defer close(p.gone)
	for {
		select {
		case <-p.kick:
		case <-p.done:
			return
		}
		g := p.g
		want := min(g.ev.start+g.ev.next.Load()+prefaultAhead/slotSize, g.size/slotSize)
		if !g.anon && want > g.limit.Load() {
			g.grow(want) // the file's blocks ahead too, off the writers' path
		}
		end := min(g.limit.Load(), want) * slotSize &^ (pageSize - 1)
		if err := guard(g, func() { p.populate(end) }); err != nil {
			g.damaged() // truncated: the watcher starts a new generation
			return
		}
	}
}

// populate faults in the pages of the mapping up to end, from where it
// stopped before.
func (p *prefaulter) populate(end uint64) {
	for at := p.upto.Load(); at < end && !p.stop.Load(); at = p.upto.Load() {
		n := min(end-at, 1<<20)
		if !populate(unsafe.Add(p.g.mem, at), n) {
			p.g.damaged()
			return
		}
		p.upto.Store(at + n)
	}
}

// stopPrefault stops the prefaulter of g, if it has one, and waits for it
// to return: the file and the mapping are about to go away.
func (g *recGen) stopPrefault() {
	if p := g.pf; p != nil {
		if !p.stop.Swap(true) {
			close(p.done)
		}
		<-p.gone
	}
}

// touch faults in the n bytes of the mapping at p for writing by adding 0
// to the first word of each page: an atomic read-modify-write, which a
// writer's concurrent store to the same word (a record's head) can neither
// lose nor be lost to.
func touch(p unsafe.Pointer, n uint64) {
	for off := uint64(0); off < n; off += pageSize {
		atomic.AddUint64((*uint64)(unsafe.Add(p, off)), 0)
	}
}
