package alloc

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// step is one operation of a sequence test:
//
//	a NAME TAG SIZE [Q]   allocate under TAG (on queue Q) and call the allocation NAME
//	f NAME [Q@P...]       free NAME, last used on queue Q up to point P
//	done Q P              the commands of queue Q up to point P have completed
//	releaseall            Allocator.ReleaseAll
//
// Queues are named by the test and made on first mention.
// dev is the device log the step must produce ("" for none: a reuse), cap
// the Cap the allocation must have (when not zero), err the error it must
// return (errors.Is).
type step struct {
	do  string
	dev string
	cap int64
	err error
}

func runSteps(t *testing.T, a *Allocator, d *fakeDevice, steps []step) map[string]Allocation {
	t.Helper()
	hs := map[string]Allocation{}
	qs := map[string]*fakeQueue{}
	queue := func(name string) *fakeQueue {
		if qs[name] == nil {
			qs[name] = &fakeQueue{name: name}
		}
		return qs[name]
	}
	for i, s := range steps {
		f := strings.Fields(s.do)
		var err error
		switch f[0] {
		case "a":
			tag, _ := strconv.Atoi(f[2])
			size, _ := strconv.ParseInt(f[3], 10, 64)
			var h Allocation
			if len(f) > 4 {
				h, err = a.AllocOn(queue(f[4]), Tag(tag), size)
			} else {
				h, err = a.Alloc(Tag(tag), size)
			}
			if err == nil {
				hs[f[1]] = h
				if s.cap != 0 && h.Cap() != s.cap {
					t.Errorf("step %d %q: Cap %d, want %d", i, s.do, h.Cap(), s.cap)
				}
				if h.Cap() < h.Size() || h.Size() < size {
					t.Errorf("step %d %q: Size %d Cap %d for request %d", i, s.do, h.Size(), h.Cap(), size)
				}
			}
		case "f":
			var uses []Use
			for _, u := range f[2:] {
				name, p, _ := strings.Cut(u, "@")
				point, _ := strconv.ParseUint(p, 10, 64)
				uses = append(uses, Use{Queue: queue(name), Point: point})
			}
			err = hs[f[1]].FreeAfter(uses)
		case "done":
			point, _ := strconv.ParseUint(f[2], 10, 64)
			queue(f[1]).done.Store(point)
		case "barrier":
			point, _ := strconv.ParseUint(f[2], 10, 64)
			a.Barrier(Use{Queue: queue(f[1]), Point: point})
		case "releaseall":
			err = a.ReleaseAll()
		default:
			t.Fatalf("step %d: bad op %q", i, s.do)
		}
		if s.err == nil && err != nil || s.err != nil && !errors.Is(err, s.err) {
			t.Errorf("step %d %q: error %v, want %v", i, s.do, err, s.err)
		}
		if got := d.take(); got != s.dev {
			t.Errorf("step %d %q: device %q, want %q", i, s.do, got, s.dev)
		}
	}
	return hs
}

// seedCases are exact sequences of the seed's tagged policy.
var seedCases = []struct {
	name  string
	steps []step
}{
	{"reuse-within-2x", []step{
		{do: "a x 1 200", dev: "+200"},
		{do: "f x"},
		{do: "a y 1 100", cap: 200}, // 100 <= 200 <= 2*100: reused
		{do: "f y"},
		{do: "a z 1 200", cap: 200}, // 200 <= 200 <= 400
		{do: "f z"},
		{do: "a w 1 150", cap: 200},
	}},
	{"release-when-too-big", []step{
		{do: "a x 1 200", dev: "+200"},
		{do: "f x"},
		{do: "a y 1 99", dev: "-200 +99", cap: 99}, // 200 > 2*99
	}},
	{"release-when-too-small", []step{
		{do: "a x 1 200", dev: "+200"},
		{do: "f x"},
		{do: "a y 1 201", dev: "-200 +201", cap: 201},
		{do: "f y"},
		{do: "a z 1 201", cap: 201}, // the tag now holds the new block
	}},
	{"one-block-per-tag", []step{
		{do: "a x 1 100", dev: "+100"},
		{do: "a y 1 120", dev: "+120"},
		{do: "f x"},
		{do: "f y", dev: "-100"}, // the tag held x's block: released
		{do: "a z 1 100", cap: 120},
		{do: "a w 1 100", dev: "+100"}, // the free list of tag 1 is empty
	}},
	{"tags-do-not-share", []step{
		{do: "a x 1 100", dev: "+100"},
		{do: "f x"},
		{do: "a y 2 100", dev: "+100"},
		{do: "f y"},
		{do: "a z 1 100", cap: 100},
		{do: "a w 2 100", cap: 100},
	}},
	{"round-to-4", []step{
		{do: "a x 1 0", dev: "+4", cap: 4},
		{do: "f x"},
		{do: "a y 1 3", cap: 4},
		{do: "a z 2 1", dev: "+4"},
		{do: "f y"},
		{do: "a v 1 8", cap: 8, dev: "-4 +8"}, // 4 < 8
		{do: "a u 3 5", dev: "+5", cap: 5},
		{do: "f u"},
		{do: "a t 3 2", cap: 5}, // 4 <= 5 <= 8
	}},
}

// TestTagHoldsConcurrentBlocks: without OneBlockPerTag a tag keeps every
// block freed under it, so that allocations in use at once all reuse, and
// a request that none fits releases the least recently freed block.
func TestTagHoldsConcurrentBlocks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"all-reused", []step{
			{do: "a x 1 100", dev: "+100"},
			{do: "a y 1 120", dev: "+120"},
			{do: "a z 1 100", dev: "+100"},
			{do: "f x"},
			{do: "f y"}, // the seed released x's block here
			{do: "f z"},
			{do: "a u 1 100", cap: 100}, // z's, the most recently freed that fits
			{do: "a v 1 100", cap: 120},
			{do: "a w 1 100", cap: 100},
			{do: "a s 1 100", dev: "+100"},
		}},
		{"prefers-own-queue", []step{
			{do: "a x 1 100", dev: "+100"},
			{do: "a y 1 100", dev: "+100"},
			{do: "f x A@1"},
			{do: "f y B@1"},
			{do: "a u 1 100 A", cap: 100},     // x's block, used on A: no order
			{do: "a v 1 100 A", dev: "A<B@1"}, // y's block, used on B
		}},
		{"misfit-releases-oldest", []step{
			{do: "a x 1 100", dev: "+100"},
			{do: "a y 1 120", dev: "+120"},
			{do: "f x"},
			{do: "f y"},
			{do: "a z 1 300", dev: "-100 +300"}, // neither fits: x's, the oldest, goes
			{do: "a w 1 100", cap: 120},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newFake()
			a, err := New(d, Config{})
			if err != nil {
				t.Fatal(err)
			}
			runSteps(t, a, d, tc.steps)
		})
	}
}

func TestSeedPolicy(t *testing.T) {
	for _, cfg := range []struct {
		name string
		cfg  Config
	}{{"seed", SeedPolicy()}, {"full-one-block", Config{OneBlockPerTag: true}}} {
		for _, tc := range seedCases {
			t.Run(cfg.name+"/"+tc.name, func(t *testing.T) {
				d := newFake()
				a, err := New(d, cfg.cfg)
				if err != nil {
					t.Fatal(err)
				}
				runSteps(t, a, d, tc.steps)
			})
		}
	}
}

func TestBins(t *testing.T) {
	for _, tc := range []struct {
		size, want int64
	}{{4, 4}, {5, 5}, {7, 7}, {8, 9}, {9, 9}, {10, 11}, {12, 13}, {15, 15}, {16, 19}, {1000, 1023}, {1024, 1279}, {1 << 20, 1<<20 + 1<<18 - 1}} {
		if got := binSize(binNumber(tc.size, 2), 2); got != tc.want {
			t.Errorf("binSize(binNumber(%d)) = %d, want %d", tc.size, got, tc.want)
		}
	}
	for mb := uint(0); mb <= 4; mb++ {
		prev := int64(0)
		for s := int64(1); s < 1<<16; s++ {
			b := binNumber(s, mb)
			got := binSize(b, mb)
			if got < s || binNumber(got, mb) != b {
				t.Fatalf("bits %d: size %d: bin %d of size %d", mb, s, b, got)
			}
			if got < prev {
				t.Fatalf("bits %d: size %d: bin size %d below the previous %d", mb, s, got, prev)
			}
			prev = got
			// A class wastes less than a fraction 2^-mb of the request.
			if s >= 1<<mb && float64(got-s) >= float64(s)/float64(uint64(1)<<mb) {
				t.Fatalf("bits %d: size %d served by %d", mb, s, got)
			}
		}
	}
}

func TestUntaggedPool(t *testing.T) {
	d := newFake()
	a, _ := New(d, Config{})
	runSteps(t, a, d, []step{
		{do: "a x 0 1000", dev: "+1023", cap: 1023},
		{do: "f x"},
		{do: "a y 0 900", cap: 1023}, // same class [896, 1023]
		{do: "a z 0 1100", dev: "+1279", cap: 1279},
		{do: "a w 0 1000", dev: "+1023"},
		{do: "f y"},
		{do: "f w"}, // a class holds any number of blocks
		{do: "f z"},
		{do: "a p 0 1000", cap: 1023},
		{do: "a q 0 1000", cap: 1023},
		{do: "a r 0 1000", dev: "+1023"},
		{do: "a s 0 4", dev: "+4"},
		{do: "releaseall", dev: "-1279"},
	})
	if s := a.Stats().Tag(NoTag); s.Requests != 8 || s.Reuses != 3 || s.DriverAllocs != 5 || s.DriverReleases != 1 {
		t.Errorf("stats %+v", s)
	}

	d = newFake()
	a, _ = New(d, Config{DisableUntaggedPool: true})
	runSteps(t, a, d, []step{
		{do: "a x 0 1000", dev: "+1000", cap: 1000},
		{do: "f x", dev: "-1000"},
		{do: "a y 0 1000", dev: "+1000"},
	})
}

func TestOutOfMemory(t *testing.T) {
	setup := func(cfg Config) (*Allocator, *fakeDevice) {
		d := newFake()
		d.capacity = 1000
		a, err := New(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		runSteps(t, a, d, []step{
			{do: "a x 1 300", dev: "+300"},
			{do: "a y 2 400", dev: "+400"},
			{do: "a z 3 200", dev: "+200"},
			{do: "f x"}, {do: "f y"}, {do: "f z"},
		})
		return a, d
	}

	t.Run("retry-succeeds", func(t *testing.T) {
		a, d := setup(Config{})
		// Largest first until the request is covered: 400, then 300.
		runSteps(t, a, d, []step{{do: "a w 4 500", dev: "!500 -400 -300 +500"}})
		s := a.Stats()
		if s.OOMRetries != 1 || s.Total.Held != 200 || s.Total.InUse != 500 {
			t.Errorf("stats %+v", s)
		}
	})

	t.Run("retry-fails", func(t *testing.T) {
		a, d := setup(Config{})
		if _, err := a.Alloc(4, 500); err != nil {
			t.Fatal(err)
		}
		d.take()
		_, err := a.Alloc(5, 900)
		var oom *OutOfMemoryError
		if !errors.As(err, &oom) || !errors.Is(err, ErrDeviceOutOfMemory) {
			t.Fatalf("error %v, want an *OutOfMemoryError wrapping ErrDeviceOutOfMemory", err)
		}
		if got := d.take(); got != "!900 -200 !900" {
			t.Errorf("device %q", got)
		}
		want := OutOfMemoryError{Tag: 5, Name: "tag5", Size: 900, AllocSize: 900, Held: 200, Released: 200, InUse: 500, Err: oom.Err}
		if *oom != want {
			t.Errorf("error %+v, want %+v", *oom, want)
		}
		if s := a.Stats().Tag(5); s.Requests != 1 || s.Failures != 1 || s.DriverAllocs != 0 {
			t.Errorf("stats %+v", s)
		}
	})

	t.Run("retry-disabled", func(t *testing.T) {
		a, d := setup(Config{DisableOOMRetry: true})
		_, err := a.Alloc(4, 500)
		var oom *OutOfMemoryError
		if !errors.As(err, &oom) || oom.Held != 900 || oom.Released != 0 || oom.Size != 500 {
			t.Fatalf("error %v", err)
		}
		if got := d.take(); got != "!500" {
			t.Errorf("device %q", got)
		}
	})

	t.Run("custom-predicate", func(t *testing.T) {
		errCL := errors.New("CL_MEM_OBJECT_ALLOCATION_FAILURE")
		a, d := setup(Config{IsOutOfMemory: func(err error) bool { return errors.Is(err, errCL) }})
		d.allocErr = errCL
		_, err := a.Alloc(4, 10)
		var oom *OutOfMemoryError
		if !errors.As(err, &oom) || !errors.Is(err, errCL) || oom.Released != 900 {
			t.Fatalf("error %v", err)
		}
		if got := d.take(); got != "!10 -400 !10 -300 !10 -200 !10" {
			t.Errorf("device %q", got)
		}
	})

	t.Run("other-error", func(t *testing.T) {
		a, d := setup(Config{})
		errX := errors.New("CL_INVALID_CONTEXT")
		d.allocErr = errX
		_, err := a.Alloc(4, 10)
		var oom *OutOfMemoryError
		if errors.As(err, &oom) || !errors.Is(err, errX) {
			t.Fatalf("error %v", err)
		}
		if got := d.take(); got != "!10" {
			t.Errorf("device %q (nothing may be released)", got)
		}
	})
}

func TestMaxAlloc(t *testing.T) {
	d := newFake()
	d.maxAlloc = 1024
	a, _ := New(d, Config{})
	runSteps(t, a, d, []step{
		{do: "a x 1 1025", err: ErrTooLarge},
		{do: "a y 0 1025", err: ErrTooLarge},
		{do: "a z 1 1024", dev: "+1024"},
		{do: "a w 0 1000", dev: "+1023"},
		{do: "a v 0 1024", dev: "+1024", cap: 1024}, // class size 1279, clamped
	})
	if d.allocCalls != 3 {
		t.Errorf("%d driver calls, want 3", d.allocCalls)
	}
	if s := a.Stats().Tag(1); s.Requests != 2 || s.Failures != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestMaxHeld(t *testing.T) {
	d := newFake()
	a, _ := New(d, Config{MaxHeld: 500})
	runSteps(t, a, d, []step{
		{do: "a x 1 200", dev: "+200"},
		{do: "a y 2 210", dev: "+210"},
		{do: "a z 3 220", dev: "+220"},
		{do: "a u 0 100", dev: "+111"},
		{do: "f x"},
		{do: "f y"},                    // 410 held
		{do: "f z", dev: "-200"},       // 630: release the least recently freed
		{do: "f u", dev: "-210"},       // 541
		{do: "a x 1 200", dev: "+200"}, // tag 1 lost its block
		{do: "a z 3 220", cap: 220},
		{do: "a u 0 100", cap: 111},
	})
	if s := a.Stats(); s.Total.Held != 0 || s.Total.DriverReleases != 2 {
		t.Errorf("stats %+v", s.Total)
	}
}

func TestStaleHandles(t *testing.T) {
	d := newFake()
	d.recycle = true // the driver hands a released block's value out again
	a, _ := New(d, Config{})

	x, _ := a.Alloc(1, 100)
	blk, _ := x.Block()
	x2 := x // a copy is the same allocation
	if err := x.Free(); err != nil {
		t.Fatal(err)
	}
	if err := x2.Free(); !errors.Is(err, ErrFreed) {
		t.Errorf("double free: %v", err)
	}
	if _, err := x.Block(); !errors.Is(err, ErrFreed) {
		t.Errorf("use after free: %v", err)
	}

	// The same block, reused by the same tag.
	y, _ := a.Alloc(1, 100)
	if b, _ := y.Block(); b != blk {
		t.Fatal("tag 1 did not reuse its block")
	}
	if err := x.Free(); !errors.Is(err, ErrFreed) || !y.Live() {
		t.Errorf("stale free after reuse: %v, live %v", err, y.Live())
	}
	if err := y.Free(); err != nil {
		t.Fatal(err)
	}

	// The same driver block, given to another tag: tag 1's block is
	// released and the driver recycles it for tag 2.
	if err := a.ReleaseAll(); err != nil {
		t.Fatal(err)
	}
	z, _ := a.Alloc(2, 100)
	if b, _ := z.Block(); b != blk {
		t.Fatal("the fake did not recycle the block")
	}
	for _, h := range []Allocation{x, y} {
		if err := h.Free(); !errors.Is(err, ErrFreed) {
			t.Errorf("stale free of a recycled block: %v", err)
		}
		if _, err := h.Block(); !errors.Is(err, ErrFreed) {
			t.Errorf("stale use of a recycled block: %v", err)
		}
	}
	if !z.Live() {
		t.Fatal("a stale free killed another tag's allocation")
	}
	before := a.Stats()
	_ = x.Free()
	if after := a.Stats(); after.Total != before.Total {
		t.Errorf("a stale free changed the stats: %+v → %+v", before.Total, after.Total)
	}
	if err := (Allocation{}).Free(); !errors.Is(err, ErrFreed) {
		t.Errorf("zero free: %v", err)
	}
	if err := z.Free(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if d.badRelease != 0 || len(d.live) != 0 {
		t.Errorf("%d bad releases, %d live", d.badRelease, len(d.live))
	}
}

func TestStats(t *testing.T) {
	d := newFake()
	a, _ := New(d, Config{OneBlockPerTag: true, TagName: func(t Tag) string { return "site" + strconv.Itoa(int(t)) }})
	runSteps(t, a, d, []step{
		{do: "a x 1 100", dev: "+100"},
		{do: "a y 1 100", dev: "+100"},
		{do: "f x"},
		{do: "f y", dev: "-100"},
		{do: "a x 1 60"},
		{do: "a y 1 300", dev: "+300"},
		{do: "f y"},
		{do: "a z 2 10", dev: "+10"},
		{do: "a v 0 10", dev: "+11"},
		{do: "f v"},
		{do: "a w 0 11"},
	})
	s := a.Stats()
	want := []TagStats{
		{Tag: 0, Name: "site0", Requests: 2, Reuses: 1, DriverAllocs: 1, InUse: 11, Peak: 11, PeakInUse: 11},
		{Tag: 1, Name: "site1", Requests: 4, Reuses: 1, DriverAllocs: 3, DriverReleases: 1, Held: 300, HeldBlocks: 1, InUse: 100, Peak: 400, PeakInUse: 400},
		{Tag: 2, Name: "site2", Requests: 1, DriverAllocs: 1, InUse: 10, Peak: 10, PeakInUse: 10},
	}
	if len(s.Tags) != len(want) {
		t.Fatalf("tags %+v", s.Tags)
	}
	for i := range want {
		if s.Tags[i] != want[i] {
			t.Errorf("tag %d:\n got %+v\nwant %+v", i, s.Tags[i], want[i])
		}
	}
	total := TagStats{Name: "total", Requests: 7, Reuses: 2, DriverAllocs: 5, DriverReleases: 1, Held: 300, HeldBlocks: 1, InUse: 121, Peak: 421, PeakInUse: 400}
	if s.Total != total {
		t.Errorf("total:\n got %+v\nwant %+v", s.Total, total)
	}
	if s.Tag(7) != (TagStats{Tag: 7}) {
		t.Errorf("unused tag: %+v", s.Tag(7))
	}
}

type hookLog struct {
	mu  sync.Mutex
	evs []string
}

func (h *hookLog) add(kind string, e Event) {
	h.mu.Lock()
	h.evs = append(h.evs, kind+" "+strconv.Itoa(int(e.Tag))+" "+strconv.FormatInt(e.Size, 10)+" "+strconv.FormatInt(e.BlockSize, 10)+" "+e.Reason.String())
	h.mu.Unlock()
}
func (h *hookLog) DriverAlloc(e Event)   { h.add("alloc", e) }
func (h *hookLog) Reuse(e Event)         { h.add("reuse", e) }
func (h *hookLog) DriverRelease(e Event) { h.add("release", e) }

func TestHookAndRelease(t *testing.T) {
	d := newFake()
	hl := &hookLog{}
	a, _ := New(d, Config{Hook: hl, OneBlockPerTag: true})
	runSteps(t, a, d, []step{
		{do: "a x 1 100", dev: "+100"},
		{do: "f x"},
		{do: "a x 1 60"},
		{do: "f x"},
		{do: "a x 1 40", dev: "-100 +40"},
		{do: "a y 2 8", dev: "+8"},
		{do: "f y"},
		{do: "releaseall", dev: "-8"},
	})
	want := "alloc 1 100 100 Reason(0)|reuse 1 60 100 Reason(0)|release 1 0 100 misfit|alloc 1 40 40 Reason(0)|alloc 2 8 8 Reason(0)|release 2 0 8 release-all"
	if got := strings.Join(hl.evs, "|"); got != want {
		t.Errorf("hook\n got %s\nwant %s", got, want)
	}

	// A failing driver release is reported, and the allocator goes on.
	d.releaseErr = errors.New("CL_INVALID_MEM_OBJECT")
	x, _ := a.Alloc(3, 10)
	y, _ := a.Alloc(3, 10)
	_ = x.Free()
	if err := y.Free(); !errors.Is(err, d.releaseErr) || !strings.Contains(err.Error(), "tag3") {
		t.Errorf("release error %v", err)
	}

	// Close releases blocks in use and stales their handles.
	if err := a.Close(); !errors.Is(err, d.releaseErr) {
		t.Errorf("close: %v", err)
	}
	if _, err := x.Block(); !errors.Is(err, ErrFreed) {
		t.Errorf("use after close: %v", err)
	}
	if _, err := a.Alloc(1, 40); !errors.Is(err, ErrClosed) {
		t.Errorf("alloc after close: %v", err)
	}
	if len(d.live) != 0 || d.badRelease != 0 {
		t.Errorf("%d live, %d bad releases after Close", len(d.live), d.badRelease)
	}
}

func TestInvalid(t *testing.T) {
	d := newFake()
	a, _ := New(d, Config{})
	if _, err := a.Alloc(1, -1); !errors.Is(err, ErrInvalidSize) {
		t.Errorf("negative size: %v", err)
	}
	if _, err := a.Alloc(MaxTag+1, 1); !errors.Is(err, ErrInvalidTag) {
		t.Errorf("big tag: %v", err)
	}
	if _, err := New(nil, Config{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := New(d, Config{BinBits: 9}); err == nil {
		t.Error("BinBits 9 accepted")
	}
	h, err := a.Alloc(MaxTag, 1)
	if err != nil || h.Tag() != MaxTag {
		t.Errorf("MaxTag: %v", err)
	}
}

// TestConcurrent runs 16 goroutines allocating and freeing across tags, with
// double frees, then checks that every driver block is released exactly once.
func TestConcurrent(t *testing.T) {
	for _, cfg := range []struct {
		name string
		cfg  Config
	}{{"full", Config{}}, {"bounded", Config{MaxHeld: 4 << 10}}, {"seed", SeedPolicy()}, {"bestfit", Config{BestFit: true}}} {
		t.Run(cfg.name, func(t *testing.T) {
			d := newFake()
			d.nolog = true
			d.capacity = 20 << 10 // out of memory now and then
			a, _ := New(d, cfg.cfg)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var unexpected []error
			for g := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					var live []Allocation
					for range 1000 {
						if len(live) < 4 && rng.IntN(2) == 0 {
							h, err := a.Alloc(Tag(rng.IntN(9)), int64(rng.IntN(2048)))
							var oom *OutOfMemoryError
							if err != nil && !errors.As(err, &oom) {
								mu.Lock()
								unexpected = append(unexpected, err)
								mu.Unlock()
							}
							if err == nil {
								live = append(live, h)
							}
							continue
						}
						if len(live) == 0 {
							continue
						}
						i := rng.IntN(len(live))
						h := live[i]
						live = append(live[:i], live[i+1:]...)
						if _, err := h.Block(); err != nil {
							t.Error(err)
						}
						if err := h.Free(); err != nil {
							t.Error(err)
						}
						if err := h.Free(); !errors.Is(err, ErrFreed) {
							t.Errorf("double free: %v", err)
						}
					}
					for _, h := range live {
						if err := h.Free(); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			if len(unexpected) > 0 {
				t.Fatal(unexpected[0])
			}
			if err := a.ReleaseAll(); err != nil {
				t.Fatal(err)
			}
			s := a.Stats()
			if d.badRelease != 0 || len(d.live) != 0 || d.allocs != d.releases {
				t.Errorf("device: %d bad releases, %d live, %d allocs, %d releases", d.badRelease, len(d.live), d.allocs, d.releases)
			}
			for id, n := range d.released {
				if n != 1 {
					t.Errorf("block %d released %d times", id, n)
				}
			}
			if s.Total.Held != 0 || s.Total.InUse != 0 || s.Total.HeldBlocks != 0 ||
				s.Total.DriverAllocs != uint64(d.allocs) || s.Total.DriverReleases != uint64(d.releases) ||
				s.Total.Requests != s.Total.Reuses+s.Total.DriverAllocs+s.Total.Failures {
				t.Errorf("stats %+v, device %d allocs %d releases", s.Total, d.allocs, d.releases)
			}
			t.Logf("%+v, %d OOM retries", s.Total, s.OOMRetries)
		})
	}
}

// TestStreamOrder checks stream-ordered reuse under every policy: reuse on
// the queue of the last use calls no Device method; reuse on another queue
// orders the uses not known to have completed; the host waits for them.
func TestStreamOrder(t *testing.T) {
	policies := []struct {
		name string
		cfg  Config
		tag  string
	}{
		{"tagged", Config{}, "1"},
		{"untagged", Config{}, "0"},
		{"bestfit", Config{BestFit: true}, "1"},
	}
	cases := []struct {
		name  string
		steps []step
		// orders is the number of Order calls; completed whether Completed
		// may be called at all.
		orders    int
		completed bool
	}{
		{name: "same-queue", steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "f x qa@3"},
			{do: "a y T 100 qa"},
			{do: "f y qa@9"},
			{do: "a z T 100 qa"},
		}},
		{name: "other-queue", orders: 1, completed: true, steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "f x qa@3"},
			{do: "a y T 100 qb", dev: "qb<qa@3"},
			{do: "f y qb@1"},
			{do: "a z T 100 qb"}, // the order is in qb now
		}},
		{name: "other-queue-completed", completed: true, steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "f x qa@3"},
			{do: "done qa 3"},
			{do: "a y T 100 qb"},
		}},
		{name: "several-queues", orders: 2, completed: true, steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "f x qa@3 qb@2"},
			{do: "a y T 100 qc", dev: "qc<qa@3,qb@2"},
			{do: "f y qc@1 qb@5"},
			{do: "done qb 5"},
			{do: "a z T 100 qa", dev: "qa<qc@1"},
		}},
		// A barrier on qa orders the reuse on another queue of a block
		// held when it was set, and of one in use then and freed with no
		// uses, until it has completed; the first free after that clears
		// it.
		{name: "barrier-held", orders: 1, completed: true, steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "f x"},
			{do: "barrier qa 4"},
			{do: "a y T 100 qb", dev: "qb<qa@4"},
		}},
		{name: "barrier-in-use", orders: 2, completed: true, steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "barrier qa 4"},
			{do: "f x"},
			{do: "a y T 100 qb", dev: "qb<qa@4"},
			{do: "f y qb@2"},
			{do: "a z T 100 qb", dev: "qb<qa@4"},
			{do: "done qa 4"},
			{do: "f z"},
			{do: "a w T 100 qc"},
		}},
		{name: "host", orders: 1, completed: true, steps: []step{
			{do: "a x T 100 qa", dev: "+D"},
			{do: "f x qa@3"},
			{do: "a y T 100", dev: "host<qa@3"},
			{do: "f y"},
			{do: "a z T 100 qb"},
		}},
	}
	for _, p := range policies {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				d := newFake()
				a, err := New(d, p.cfg)
				if err != nil {
					t.Fatal(err)
				}
				size := "100"
				if p.tag == "0" {
					size = "111" // the size class of 100
				}
				steps := make([]step, len(tc.steps))
				for i, s := range tc.steps {
					s.do = strings.Replace(s.do, " T ", " "+p.tag+" ", 1)
					s.dev = strings.Replace(s.dev, "D", size, 1)
					steps[i] = s
				}
				runSteps(t, a, d, steps)
				if d.orders != tc.orders {
					t.Errorf("%d Order calls, want %d", d.orders, tc.orders)
				}
				if !tc.completed && d.completedCalls != 0 {
					t.Errorf("%d Completed calls on same-queue reuse, want 0", d.completedCalls)
				}
				if s := a.Stats().Total; s.Ordered != uint64(tc.orders) || s.DriverAllocs != 1 {
					t.Errorf("stats %+v", s)
				}
			})
		}
	}
}

// TestStreamOrderFailures checks that a block the device cannot order is
// released rather than handed out, and that out of memory waits for the
// last uses of the blocks it releases before retrying.
func TestStreamOrderFailures(t *testing.T) {
	t.Run("order-fails", func(t *testing.T) {
		d := newFake()
		a, _ := New(d, Config{})
		errQ := errors.New("CL_INVALID_COMMAND_QUEUE")
		runSteps(t, a, d, []step{
			{do: "a x 1 100 qa", dev: "+100"},
			{do: "f x qa@3"},
		})
		d.orderErr = errQ
		runSteps(t, a, d, []step{{do: "a y 1 100 qb", dev: "qb<qa@3 -100", err: errQ}})
		d.orderErr = nil
		runSteps(t, a, d, []step{{do: "a z 1 100 qb", dev: "+100"}})
		s := a.Stats().Total
		if s.Requests != s.Reuses+s.DriverAllocs+s.Failures || s.Failures != 1 || s.InUse != 100 || s.Held != 0 || s.Ordered != 0 {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("out-of-memory-waits", func(t *testing.T) {
		d := newFake()
		d.capacity = 300
		a, _ := New(d, Config{})
		runSteps(t, a, d, []step{
			{do: "a x 1 200 qa", dev: "+200"},
			{do: "f x qa@3"},
			{do: "a y 2 200 qb", dev: "!200 host<qa@3 -200 +200"},
		})
	})
}

// TestOutOfMemorySettleFails: when the last uses of the blocks that out
// of memory would release cannot be waited for, the blocks are kept (their
// memory may still be in use) and the allocation fails with both errors,
// the driver's and the wait's.
func TestOutOfMemorySettleFails(t *testing.T) {
	d := newFake()
	d.capacity = 300
	a, _ := New(d, Config{})
	runSteps(t, a, d, []step{
		{do: "a x 1 200 qa", dev: "+200"},
		{do: "f x qa@3"},
	})
	errQ := errors.New("CL_INVALID_COMMAND_QUEUE")
	d.orderErr = errQ
	runSteps(t, a, d, []step{{do: "a y 2 200 qb", dev: "!200 host<qa@3", err: errQ}})
	_, err := a.AllocOn(nil, 2, 200)
	if !errors.Is(err, ErrDeviceOutOfMemory) || !errors.Is(err, errQ) {
		t.Errorf("error %v: want the driver's out of memory and the wait's error", err)
	}
	d.take()
	d.orderErr = nil
	if s := a.Stats().Tag(1); s.HeldBlocks != 1 || s.DriverReleases != 0 {
		t.Errorf("tag 1 %+v: want its block kept, not released", s)
	}
	if _, err := a.Alloc(1, 200); err != nil || a.Stats().Tag(1).Reuses != 1 {
		t.Errorf("the kept block: %v, stats %+v; want it reused", err, a.Stats().Tag(1))
	}
}

// TestPeakCountsBorrowedBlocks: under BestFit a tag that takes another
// tag's block owns more bytes than its driver allocations; its peak counts
// them, so that it is never below what the tag holds and uses.
func TestPeakCountsBorrowedBlocks(t *testing.T) {
	d := newFake()
	a, _ := New(d, Config{BestFit: true})
	runSteps(t, a, d, []step{
		{do: "a x 1 1000", dev: "+1000"},
		{do: "f x"},
		{do: "a y 2 900", cap: 1000}, // tag 1's block, now tag 2's
	})
	for _, ts := range a.Stats().Tags {
		if ts.Peak < ts.Held+ts.InUse {
			t.Errorf("tag %d: peak %d below held %d + in use %d", ts.Tag, ts.Peak, ts.Held, ts.InUse)
		}
	}
}

// TestBestFit checks Futhark's best-fit rule across tags.
func TestBestFit(t *testing.T) {
	d := newFake()
	a, _ := New(d, Config{BestFit: true})
	runSteps(t, a, d, []step{
		{do: "a x 1 10000", dev: "+10000"},
		{do: "a y 2 8000", dev: "+8000"},
		{do: "a s 3 100", dev: "+100"},
		{do: "f x"}, {do: "f y"}, {do: "f s"},
		// Smallest fit across tags: 8000 (less than half wasted) before 10000.
		{do: "a a 4 6000", cap: 8000},
		// 10000 would waste more than half of itself on tag 5: a new block.
		{do: "a b 5 4000", dev: "+4000"},
		// ... but serves its own tag whatever the waste.
		{do: "a c 1 4000", cap: 10000},
		// A block under 4096 bytes serves any tag.
		{do: "a e 6 8", cap: 100},
		{do: "f a"}, {do: "f b"}, {do: "f c"}, {do: "f e"},
		// Every freed block is held: no per-tag limit, no misfit release.
		{do: "a f 7 20000", dev: "+20000"},
	})
	if s := a.Stats().Total; s.HeldBlocks != 4 || s.DriverReleases != 0 {
		t.Errorf("stats %+v", s)
	}
	// Of two equal blocks, the one that needs no ordering on the queue.
	d2 := newFake()
	b, _ := New(d2, Config{BestFit: true})
	runSteps(t, b, d2, []step{
		{do: "a x 1 100 qa", dev: "+100"},
		{do: "a y 1 100 qb", dev: "+100"},
		{do: "f y qb@1"},
		{do: "f x qa@1"},
		{do: "a z 1 100 qb"},
		{do: "a w 1 100 qb", dev: "qb<qa@1"},
	})
}
