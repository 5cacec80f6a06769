package rt_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// TestQueueReleaseRSS runs 10,000 short-lived workers, four at a time,
// each making a queue, launching on it (on a buffer of its own from the
// allocator and on one buffer that every worker shares), reading back and
// releasing the queue, as README's workers do: the process's resident
// memory after the 10,000th must be within 3 MiB of what it was after the
// 1,000th, and the shared buffer's use log must keep no released queue.
// Without Release the process grew by about 2.3 KB a queue (issue 52); a
// Release that only waited for the queue, and left it live, by 32 MiB
// over the 9,000 (3.6 KB a queue). It runs
// in a child process with glibc's mmap threshold fixed, as
// TestCloseReleasesMemory does, and for its reasons.
func TestQueueReleaseRSS(t *testing.T) {
	if os.Getenv("DGEN_TEST_RSS_CHILD") == "" {
		if testing.Short() {
			t.Skip("short: 10,000 queues")
		}
		if sel := testenv.Device(); sel != "cpu" {
			t.Skipf("DGEN_DEVICE=%q: this test measures PoCL's process", sel)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestQueueReleaseRSS$", "-test.v")
		cmd.Env = append(os.Environ(), "DGEN_TEST_RSS_CHILD=1", "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS")) {
			t.Fatalf("child: %v\n%s", err, out)
		}
		for line := range bytes.Lines(out) {
			if bytes.Contains(line, []byte(" workers: ")) {
				t.Logf("%s", bytes.TrimSpace(line))
			}
		}
		return
	}
	const (
		workers  = 10000
		at       = 1000
		parallel = 4
		// The race detector's own memory grew by 5 MiB over 10,000
		// workers, and by 4 MiB over 30,000; rt's, by 0.6 MiB.
		tolerance = 3 << 20
		n         = 1024
	)
	ctx := openCPUConfig(t, rt.Config{})
	shared, err := rt.Alloc[float32](ctx.Queue(), n)
	if err != nil {
		t.Fatal(err)
	}
	work := func(v float32) error {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			return err
		}
		if err := (&mdSet{B: shared, V: v}).Enqueue(q, rt.Range1(n)); err != nil {
			return err
		}
		if err := releaseWorkerOn(q, n, v); err != nil {
			return err
		}
		return q.Release()
	}
	// Each phase runs parallel goroutines, each running its share of
	// the workers one after another: the race detector keeps memory for
	// every goroutine the process started.
	phase := func(from, to int) {
		var wg sync.WaitGroup
		errs := make([]error, parallel)
		for g := range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for w := from + g; w < to && errs[g] == nil; w += parallel {
					errs[g] = work(float32(w))
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("workers %d to %d: %v", from, to, err)
		}
	}
	phase(0, at)
	first := residentBytes(t)
	phase(at, workers)
	if got := core.UseLogLen(memOf(shared)); got > parallel {
		t.Errorf("the buffer that every worker used records uses on %d queues besides its first, want at most %d (the released queues' uses are complete)", got, parallel)
	}
	last := residentBytes(t)
	t.Logf("%d workers: %d KiB resident after %d, %d KiB after %d (%+d KiB); %d live queues",
		workers, first>>10, at, last>>10, workers, (last-first)>>10, core.LiveQueues(cx(ctx)))
	bound := int64(tolerance)
	if raceDetector {
		bound += 6 << 20
	}
	if last-first > bound {
		t.Errorf("%d KiB more resident memory after %d workers than after %d (at most %d KiB)", (last-first)>>10, workers, at, bound>>10)
	}
}
