package trace

import (
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestPrefault checks that the traced goroutine takes next to no page
// faults while it writes a perfetto file in the steady state: the
// prefaulter has mapped the pages ahead of it. Without the prefaulter,
// 64Ki records (4 MiB) fault 1024 times, once per page; with it, 0 to a
// dozen (writeback may write-protect a page again), so the bound is 64.
func TestPrefault(t *testing.T) {
	tr, err := Open("perfetto:"+filepath.Join(t.TempDir(), "t.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	q := tr.Device(0, "d").Queue(0, "q", false)
	pair := func(n int) {
		for range n {
			tk := q.Begin(Kernel, "k", 0)
			tk.EndRelease()
		}
	}
	pair(1 << 14) // past the first wake-up
	pf := tr.owned[0].(*perfettoFile).rec.gen.Load().pf
	want := uint64(1<<14+1<<16) * slotSize
	for deadline := time.Now().Add(10 * time.Second); pf.upto.Load() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the prefaulter reached %d bytes in 10 s, want %d", pf.upto.Load(), want)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadFaults()
	pair(1 << 16)
	if n := threadFaults() - before; n > 64 {
		t.Errorf("writing 4 MiB of records faulted %d times on the traced thread, want at most 64", n)
	}
}

// threadFaults returns the page faults of the calling thread so far.
func threadFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Minflt + ru.Majflt
}
