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

// openRecFile creates the record file at path: a growing log (ringBytes 0)
// or a definitions log and an event ring of ringBytes.
func openRecFile(path string, ringBytes uint64, start int64) (*recFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*recFile, error) {
		f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	// A file that cannot be mapped (/dev/null, a pipe) gets private
	// memory instead, written to it at Close: not crash-proof.
	r := &recFile{f: f, path: path, anon: !fi.Mode().IsRegular()}
	var initial uint64
	if ringBytes == 0 {
		initial = firstChunk
	} else {
		// The ring's slots are a power of two, at most ringBytes.
		ringBytes = slotSize << (bits.Len64(ringBytes/slotSize) - 1)
		initial = ringDefs + ringBytes + slotSize
	}
	if !r.anon {
		if err := allocate(f, int64(initial)); err != nil {
			return fail(fmt.Errorf("allocate %d bytes: %w", initial, err))
		}
	}
	size := uint64(appendMap)
	if ringBytes != 0 {
		size = initial
	}
	fd, flags := int(f.Fd()), syscall.MAP_SHARED
	if r.anon {
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
	r.mem, r.size = unsafe.Pointer(&mem[0]), size
	r.limit.Store(initial / slotSize)
	if r.anon {
		r.limit.Store(size / slotSize)
	}
	hdr := mem[:slotSize]
	copy(hdr[hdrMagic:], logMagic)
	binary.LittleEndian.PutUint64(hdr[hdrStart:], uint64(start))
	if ringBytes == 0 {
		binary.LittleEndian.PutUint64(hdr[hdrMode:], modeAppend)
		binary.LittleEndian.PutUint64(hdr[hdrDefsStart:], 1)
		r.defs = &slog{f: r, start: 1}
		r.ev = r.defs
	} else {
		defs := uint64(ringDefs / slotSize)
		ring := ringBytes / slotSize
		binary.LittleEndian.PutUint64(hdr[hdrMode:], modeRing)
		binary.LittleEndian.PutUint64(hdr[hdrDefsStart:], 1)
		binary.LittleEndian.PutUint64(hdr[hdrDefsSlots:], defs)
		binary.LittleEndian.PutUint64(hdr[hdrRingStart:], 1+defs)
		binary.LittleEndian.PutUint64(hdr[hdrRingSlots:], ring)
		r.defs = &slog{f: r, start: 1, slots: defs}
		r.ev = &slog{f: r, start: 1 + defs, slots: ring, ring: true}
	}
	empty := map[string]uint32{}
	r.strs.Store(&empty)
	if ringBytes == 0 {
		r.startPrefault()
	}
	return r, nil
}

// grow makes the file back at least need slots. It reports false, and
// stops growing, once the file cannot grow (a full disk, or the end of the
// mapping).
func (r *recFile) grow(need uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	lim := r.limit.Load()
	if need <= lim {
		return true
	}
	if r.full != nil {
		return false
	}
	maxSlots := r.size / slotSize
	if need > maxSlots {
		r.full = fmt.Errorf("the trace reached %d bytes, the most it maps", r.size)
		return false
	}
	next := min(max(need, lim+min(lim, growStep/slotSize)), maxSlots)
	if err := allocate(r.f, int64(next*slotSize)); err != nil {
		r.full = fmt.Errorf("grow to %d bytes: %w", next*slotSize, err)
		return false
	}
	r.limit.Store(next)
	return true
}

// bytes returns the mapped bytes that hold records: the header and every
// slot reserved so far.
func (r *recFile) bytes() []byte {
	n := r.limit.Load() * slotSize
	return unsafe.Slice((*byte)(r.mem), n)
}

// unmapDelay is how long a closed file's address range stays mapped, to
// private pages, before it is released.
const unmapDelay = time.Minute

// unmap detaches the mapping from the file and closes the file; the
// records stay in the file. Writers check r.closed before they store, but
// one that checked just before may still store a record: so the address
// range stays mapped, to private pages that nothing reads (see detach),
// for unmapDelay, and is released after.
func (r *recFile) unmap() error {
	r.closed.Store(true)
	r.stopPrefault()
	err := detach(r.mem, r.size)
	r.mu.Lock() // a writer's grow may still use the file
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	r.mu.Unlock()
	if err == nil {
		mem := unsafe.Slice((*byte)(r.mem), r.size)
		time.AfterFunc(unmapDelay, func() { syscall.Munmap(mem) })
	}
	return err
}

// used returns the number of slots that hold records or may: the header
// and every slot reserved so far.
func (r *recFile) used() uint64 {
	if r.ev.ring {
		return r.limit.Load()
	}
	return min(r.limit.Load(), r.ev.start+r.ev.next.Load())
}
