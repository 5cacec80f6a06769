package alloc

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// fakeBlock is a driver block of the fake device.
type fakeBlock struct {
	id   int
	size int64
}

// fakeDevice is a fault-injecting Device. It records every driver call in a
// log ("+100" an allocation, "-100" a release, "!100" a failed allocation),
// fails allocations beyond capacity with ErrDeviceOutOfMemory, counts
// releases of blocks that are not live, and can recycle released blocks so
// that a new allocation gets the very Block value an old one had.
type fakeDevice struct {
	mu         sync.Mutex
	maxAlloc   int64
	capacity   int64 // total live bytes; 0 is unlimited
	recycle    bool
	allocErr   error // returned by every Alloc while set
	releaseErr error // returned by every Release while set (the block is still released)
	nolog      bool
	orderErr   error // returned by every Order while set

	next       int
	live       map[*fakeBlock]bool
	liveBytes  int64
	pool       []*fakeBlock
	log        []string
	allocs     int
	allocCalls int
	releases   int
	badRelease int
	orders     int // calls of Order
	// completedCalls counts calls of Completed.
	completedCalls int
	released       map[int]int // block id → times released
}

func newFake() *fakeDevice {
	return &fakeDevice{live: map[*fakeBlock]bool{}, released: map[int]int{}}
}

func (d *fakeDevice) Alloc(size int64) (Block, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.allocCalls++
	if d.allocErr != nil {
		d.logf("!%d", size)
		return nil, fmt.Errorf("fake: create buffer of %d bytes: %w", size, d.allocErr)
	}
	if d.capacity > 0 && d.liveBytes+size > d.capacity {
		d.logf("!%d", size)
		return nil, fmt.Errorf("fake: create buffer of %d bytes: %w", size, ErrDeviceOutOfMemory)
	}
	var b *fakeBlock
	if d.recycle && len(d.pool) > 0 {
		b = d.pool[len(d.pool)-1]
		d.pool = d.pool[:len(d.pool)-1]
		b.size = size
	} else {
		d.next++
		b = &fakeBlock{id: d.next, size: size}
	}
	d.live[b] = true
	d.liveBytes += size
	d.allocs++
	d.logf("+%d", size)
	return b, nil
}

func (d *fakeDevice) Release(blk Block) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := blk.(*fakeBlock)
	if !ok || !d.live[b] {
		d.badRelease++
		return errors.New("fake: release of a block that is not live")
	}
	delete(d.live, b)
	d.liveBytes -= b.size
	d.releases++
	d.released[b.id]++
	if d.recycle {
		d.pool = append(d.pool, b)
	}
	d.logf("-%d", b.size)
	return d.releaseErr
}

func (d *fakeDevice) MaxAlloc() int64 { return d.maxAlloc }

// fakeQueue is a queue of the fake device: the commands up to done have
// completed.
type fakeQueue struct {
	name string
	done atomic.Uint64
}

func (d *fakeDevice) Completed(u Use) bool {
	d.mu.Lock()
	d.completedCalls++
	d.mu.Unlock()
	return u.Queue.(*fakeQueue).done.Load() >= u.Point
}

// Order logs "q<a@3,b@5" (q waits for a up to point 3 and b up to 5), or
// "host<a@3" for the nil queue, and fails while orderErr is set.
func (d *fakeDevice) Order(q Queue, uses []Use) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.orders++
	var b strings.Builder
	if q == nil {
		b.WriteString("host")
	} else {
		b.WriteString(q.(*fakeQueue).name)
	}
	for i, u := range uses {
		b.WriteString([]string{"<", ","}[min(i, 1)])
		fmt.Fprintf(&b, "%s@%d", u.Queue.(*fakeQueue).name, u.Point)
	}
	d.logf("%s", b.String())
	return d.orderErr
}

func (d *fakeDevice) logf(format string, args ...any) {
	if !d.nolog {
		d.log = append(d.log, fmt.Sprintf(format, args...))
	}
}

// take returns the log since the last call, space separated.
func (d *fakeDevice) take() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := strings.Join(d.log, " ")
	d.log = d.log[:0]
	return s
}
