//go:build unix

package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Sizes of the mapping of a record file.
const (
	// appendMap is the address space mapped for a perfetto file; the file
	// grows within it, and events past it are dropped (and counted).
	appendMap = 64 << 30
	// growStep bounds how much a perfetto file grows at once.
	growStep = 64 << 20
	// firstChunk is the size a perfetto file is given at Open, so that a
	// full disk is reported there.
	firstChunk = 1 << 20
	// ringDefs is the size of a flight file's definitions log.
	ringDefs = 1 << 20
)

// allocate gives f disk blocks for its first size bytes; a variable so
// that tests can inject a full disk.
var allocate = allocateFile

// openGen makes f, opened for reading and writing and empty, a record
// file: a growing log (ringBytes 0) or a definitions log and an event ring
// of ringBytes. The generation owns f from then on, whatever the error.
func openGen(f *os.File, ringBytes uint64, start int64, owner *recFile) (*recGen, error) {
	fail := func(err error) (*recGen, error) {
		f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	// A file that cannot be mapped (/dev/null, a pipe) gets private
	// memory instead, written to it at Close: not crash-proof.
	g := &recGen{f: f, owner: owner, anon: !fi.Mode().IsRegular()}
	if owner != nil {
		g.drops = owner.drops
	}
	var initial uint64
	if ringBytes == 0 {
		initial = firstChunk
	} else {
		// The ring's slots are a power of two, at most ringBytes.
		ringBytes = slotSize << (bits.Len64(ringBytes/slotSize) - 1)
		initial = ringDefs + ringBytes + slotSize
	}
	if !g.anon {
		if err := allocate(f, int64(initial)); err != nil {
			return fail(fmt.Errorf("allocate %d bytes: %w", initial, err))
		}
	}
	size := uint64(appendMap)
	if ringBytes != 0 {
		size = initial
	}
	fd, flags := int(f.Fd()), syscall.MAP_SHARED
	if g.anon {
		fd, flags = -1, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve
	}
	var mem []byte
	for {
		mem, err = syscall.Mmap(fd, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, flags)
		if err == nil || !errors.Is(err, syscall.ENOMEM) || size <= initial {
			break
		}
		size = max(size/4, initial)
	}
	if err != nil {
		return fail(fmt.Errorf("map: %w", err))
	}
	g.mem, g.size = unsafe.Pointer(&mem[0]), size
	g.limit.Store(initial / slotSize)
	if g.anon {
		g.limit.Store(size / slotSize)
	}
	if err := guard(g, func() { g.writeHeader(mem[:slotSize], ringBytes, start) }); err != nil {
		g.unmap()
		return nil, err
	}
	if ringBytes == 0 {
		g.startPrefault()
	}
	return g, nil
}

// writeHeader writes the header of a new generation, hdr its first slot,
// and sets up its logs.
func (g *recGen) writeHeader(hdr []byte, ringBytes uint64, start int64) {
	copy(hdr[hdrMagic:], logMagic)
	binary.LittleEndian.PutUint64(hdr[hdrStart:], uint64(start))
	if ringBytes == 0 {
		binary.LittleEndian.PutUint64(hdr[hdrMode:], modeAppend)
		binary.LittleEndian.PutUint64(hdr[hdrDefsStart:], 1)
		g.defs = &slog{f: g, start: 1}
		g.ev = g.defs
	} else {
		defs := uint64(ringDefs / slotSize)
		ring := ringBytes / slotSize
		binary.LittleEndian.PutUint64(hdr[hdrMode:], modeRing)
		binary.LittleEndian.PutUint64(hdr[hdrDefsStart:], 1)
		binary.LittleEndian.PutUint64(hdr[hdrDefsSlots:], defs)
		binary.LittleEndian.PutUint64(hdr[hdrRingStart:], 1+defs)
		binary.LittleEndian.PutUint64(hdr[hdrRingSlots:], ring)
		g.defs = &slog{f: g, start: 1, slots: defs}
		g.ev = &slog{f: g, start: 1 + defs, slots: ring, ring: true}
	}
	empty := map[string]uint32{}
	g.strs.Store(&empty)
}

// grow makes the file back at least need slots. It reports false, and
// stops growing, once the file cannot grow (a full disk, or the end of the
// mapping).
func (g *recGen) grow(need uint64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	lim := g.limit.Load()
	if need <= lim {
		return true
	}
	if g.full != nil {
		return false
	}
	if g.shrunk(lim) {
		// Someone truncated the file: growing it again would hide that
		// from the watcher, which starts a new generation.
		g.damaged()
		return false
	}
	maxSlots := g.size / slotSize
	if need > maxSlots {
		g.full = fmt.Errorf("the trace reached %d bytes, the most it maps", g.size)
		return false
	}
	next := min(max(need, lim+min(lim, growStep/slotSize)), maxSlots)
	if err := allocate(g.f, int64(next*slotSize)); err != nil {
		g.full = fmt.Errorf("grow to %d bytes: %w", next*slotSize, err)
		return false
	}
	g.limit.Store(next)
	return true
}

// shrunk reports whether the file is shorter than the lim slots it backed:
// truncated by someone else. Read lim before the call: the file is grown
// before limit is raised.
func (g *recGen) shrunk(lim uint64) bool {
	if g.anon {
		return false
	}
	var st syscall.Stat_t
	return syscall.Fstat(int(g.f.Fd()), &st) == nil && uint64(st.Size) < lim*slotSize
}

// bytes returns the mapped bytes that hold records: the header and every
// slot reserved so far.
func (g *recGen) bytes() []byte {
	n := g.limit.Load() * slotSize
	return unsafe.Slice((*byte)(g.mem), n)
}

// unmapDelay is how long a closed file's address range stays mapped, to
// private pages, before it is released.
const unmapDelay = time.Minute

// unmap detaches the mapping from the file and closes the file; the
// records stay in the file. Writers check g.closed before they store, but
// one that checked just before may still store a record: so the address
// range stays mapped, to private pages that nothing reads (see detach),
// for unmapDelay, and is released after.
func (g *recGen) unmap() error {
	if g.closed.Swap(true) {
		return nil
	}
	g.stopPrefault()
	err := detach(g.mem, g.size)
	g.mu.Lock() // a writer's grow may still use the file
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	g.mu.Unlock()
	if err == nil {
		mem := unsafe.Slice((*byte)(g.mem), g.size)
		time.AfterFunc(unmapDelay, func() { syscall.Munmap(mem) })
	}
	return err
}

// used returns the number of slots that hold records or may: the header
// and every slot reserved so far.
func (g *recGen) used() uint64 {
	if g.ev.ring {
		return g.limit.Load()
	}
	return min(g.limit.Load(), g.ev.start+g.ev.next.Load())
}

// moved says whether g's file is still the one at name: "" if so,
// "removed" when it has no name left, "moved away" when name is another
// file or none.
func (g *recGen) moved(name string) string {
	var st, at syscall.Stat_t
	if syscall.Fstat(int(g.f.Fd()), &st) != nil {
		return ""
	}
	if err := syscall.Stat(name, &at); err == nil && at.Dev == st.Dev && at.Ino == st.Ino {
		return ""
	}
	if st.Nlink == 0 {
		return "removed"
	}
	return "moved away"
}
