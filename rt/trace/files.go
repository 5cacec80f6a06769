package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unsafe"
)

// perfettoFile is the built-in "perfetto" subscriber. While the program
// runs, it writes a record file (see binlog.go) on the traced goroutines,
// into a shared mapping of PATH: nothing an event's trace point has
// returned from is lost however the process ends. Close converts the file
// in place to Chrome trace event JSON; the file of a process that ended
// without closing its tracer is converted by Convert (dgen trace json).
type perfettoFile struct {
	rec  *recFile
	once sync.Once
	err  error
}

func openPerfetto(path string, t *Tracer) (*perfettoFile, error) {
	r, err := newRecFile(path, 0, t)
	if err != nil {
		return nil, err
	}
	return &perfettoFile{rec: r}, nil
}

// Wants implements KindSubscriber.
func (p *perfettoFile) Wants(k Kind) bool { return recWants(k) }

func (p *perfettoFile) recFile() *recFile { return p.rec }

// HandleEvent implements Subscriber: it writes the event's record.
func (p *perfettoFile) HandleEvent(e Event) { p.rec.handle(&e) }

// Close converts the file to JSON and closes it. Events that arrive after
// Close has begun may be missing from the JSON.
func (p *perfettoFile) Close() error {
	p.once.Do(func() {
		if err := p.rec.close(); err != nil {
			p.err = &writeError{op: "perfetto: " + p.rec.path, err: err}
		}
	})
	return p.err
}

// close converts the current generation to JSON at r.path, after a last
// check of the file, and releases the path.
func (r *recFile) close() error {
	r.stopWatch()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkLocked()
	if r.stopped != nil {
		// No generation to convert: the last one was retired.
		return errors.Join(fmt.Errorf("the trace stopped: %w", r.stopped), r.closeLocked())
	}
	var errs []error
	g := r.gen.Load()
	var l *recLog
	var err error
	ferr := guard(g, func() {
		if full := g.fullError(); full != nil && g.dropped() > 0 {
			errs = append(errs, fmt.Errorf("%d events dropped: %w", g.dropped(), full))
		}
		l, err = readLog(g.bytes()[:g.used()*slotSize])
	})
	if err == nil {
		err = ferr
	}
	if err == nil {
		err = g.writeJSON(r.path, l)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("convert to JSON (the record file is left for dgen trace json): %w", err))
	}
	if err := r.closeLocked(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// writeJSON writes l as JSON to path: by a rename over the record file, or
// straight to a file that is not mapped.
func (g *recGen) writeJSON(path string, l *recLog) error {
	if !g.anon {
		return writeFileAtomic(path, l.writeJSON)
	}
	bw := bufio.NewWriterSize(g.f, 1<<16)
	err := l.writeJSON(bw)
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// DefaultFlightSize is the ring size of a flight recorder when none is
// given: about a million events.
const DefaultFlightSize = 64 << 20

// FlightRecorderConfig configures a FlightRecorder, as
// runtime/trace.FlightRecorderConfig does Go's execution tracer.
type FlightRecorderConfig struct {
	// Path is the file that holds the ring while the program runs, and
	// that Dump writes the newest events to as JSON.
	Path string
	// MaxBytes bounds the ring: 64 bytes an event, in a number of slots
	// that is the largest power of two that fits (DefaultFlightSize when 0;
	// at least 64 KiB).
	MaxBytes uint64
}

// A FlightRecorder keeps the newest events of a Tracer in a ring of bounded
// size, at the cost per event of the perfetto subscriber, in the spirit of
// Go 1.25's runtime/trace.FlightRecorder. The ring is a shared mapping of
// the file at Path, so the newest events are in that file however the
// process ends, an unrecovered panic or SIGKILL included (Convert, or
// dgen trace json, turns it into JSON). WriteTo and Dump write them as
// JSON while the program runs: DGEN_TRACE=flight:PATH dumps to PATH on
// SIGUSR1 and SIGQUIT, and on Close. A FlightRecorder is a Subscriber:
// subscribe it to a Tracer to start it.
type FlightRecorder struct {
	rec    *recFile
	path   string
	mu     sync.Mutex // serialises dumps and Close
	closed bool
	sig    chan os.Signal
	done   chan struct{}
}

// NewFlightRecorder creates the ring file of a flight recorder. It reports
// an unwritable path, a full disk or a bad size at once.
func NewFlightRecorder(cfg FlightRecorderConfig) (*FlightRecorder, error) {
	return newFlight(cfg, nil)
}

func newFlight(cfg FlightRecorderConfig, t *Tracer) (*FlightRecorder, error) {
	size := cfg.MaxBytes
	if size == 0 {
		size = DefaultFlightSize
	}
	if size < minFlightSize || size > maxFlightSize {
		return nil, fmt.Errorf("trace: flight: size %d: want %d to %d bytes", size, minFlightSize, maxFlightSize)
	}
	r, err := newRecFile(cfg.Path, size, t)
	if err != nil {
		return nil, fmt.Errorf("trace: flight:%s: %w", cfg.Path, err)
	}
	return &FlightRecorder{rec: r, path: r.path}, nil
}

// The bounds of a flight recorder's ring.
const (
	minFlightSize = 64 << 10
	maxFlightSize = 1 << 40
)

// Wants implements KindSubscriber.
func (fr *FlightRecorder) Wants(k Kind) bool { return recWants(k) }

func (fr *FlightRecorder) recFile() *recFile { return fr.rec }

// HandleEvent implements Subscriber: it writes the event's record into the
// ring.
func (fr *FlightRecorder) HandleEvent(e Event) { fr.rec.handle(&e) }

// Enabled reports whether the recorder is recording (not closed).
func (fr *FlightRecorder) Enabled() bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return !fr.closed
}

// snapshotLocked decodes a copy of the ring, taken while writers go on,
// after a check of the file; r.mu is held.
func (r *recFile) snapshotLocked() (*recLog, error) {
	r.checkLocked()
	if r.stopped != nil {
		return nil, fmt.Errorf("the ring stopped: %w", r.stopped)
	}
	g := r.gen.Load()
	var data []byte
	if err := guard(g, func() { data = append([]byte(nil), unsafe.Slice((*byte)(g.mem), g.used()*slotSize)...) }); err != nil {
		r.checkLocked() // the next snapshot reads the new ring
		return nil, err
	}
	return readLog(data)
}

// WriteTo writes the events in the ring now, oldest first, as Chrome
// trace event JSON. Events recorded while it copies the ring may or may
// not be included.
func (fr *FlightRecorder) WriteTo(w io.Writer) (int64, error) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.closed {
		return 0, errors.New("trace: flight: recorder closed")
	}
	fr.rec.mu.Lock()
	l, err := fr.rec.snapshotLocked()
	fr.rec.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("trace: flight: %w", err)
	}
	cw := &countWriter{w: w}
	err = l.writeJSON(cw)
	return cw.n, err
}

// Dump writes the events in the ring now to Path as JSON, replacing the
// file by a rename. The ring goes on in the same file, which stays linked
// as Path+".ring" after the first dump, so that a later crash leaves the
// newest events there.
func (fr *FlightRecorder) Dump() error {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.closed {
		return errors.New("trace: flight: recorder closed")
	}
	fr.rec.mu.Lock()
	defer fr.rec.mu.Unlock()
	return fr.dumpLocked(true)
}

// dumpLocked writes the ring to Path as JSON; with link, it first keeps the
// ring file linked as Path+".ring". fr.mu and fr.rec.mu are held.
func (fr *FlightRecorder) dumpLocked(link bool) error {
	r := fr.rec
	l, err := r.snapshotLocked()
	if err != nil {
		return fmt.Errorf("trace: flight: dump to %s: %w", fr.path, err)
	}
	g := r.gen.Load()
	if link && r.name == r.path && !g.anon {
		ring := r.path + ".ring"
		os.Remove(ring)
		if err := linkFile(g.f, r.path, ring); err != nil {
			return fmt.Errorf("trace: flight: %w", err)
		}
		r.name = ring
	}
	if err := g.writeJSON(fr.path, l); err != nil {
		return fmt.Errorf("trace: flight: dump to %s: %w", fr.path, err)
	}
	return nil
}

// Close dumps the ring to Path as JSON, removes Path+".ring" and stops the
// recorder; its Tracer must not deliver events to it any more.
func (fr *FlightRecorder) Close() error {
	fr.stopSignals()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.closed {
		return nil
	}
	fr.closed = true
	r := fr.rec
	r.stopWatch()
	r.mu.Lock()
	defer r.mu.Unlock()
	err := fr.dumpLocked(false)
	if r.name != r.path {
		os.Remove(r.name)
	}
	if uerr := r.closeLocked(); err == nil && uerr != nil {
		err = fmt.Errorf("trace: flight: %w", uerr)
	}
	return err
}

// Dropped returns the number of events the recorder could not store: none
// unless its definitions (nodes, queues, devices, names) outgrew their
// 1 MiB, or its file was truncated under it.
func (fr *FlightRecorder) Dropped() uint64 {
	g := fr.rec.gen.Load()
	var n uint64
	guard(g, func() { n = g.dropped() })
	return n + fr.rec.lost.Load()
}

// linkChecked links from as to after a check that from still names the
// open file f.
func linkChecked(f *os.File, from, to string) error {
	if !names(from, f) {
		return fmt.Errorf("link %s as %s: %s is no longer the ring's file", from, to, from)
	}
	return os.Link(from, to)
}
