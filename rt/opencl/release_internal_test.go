package opencl

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestReleaser: do returns while an earlier release still waits (as
// NVIDIA's clReleaseMemObject waits for a kernel), and the releases run
// one at a time, in order, once it returns.
func TestReleaser(t *testing.T) {
	var r releaser
	block := make(chan struct{})
	var (
		mu  sync.Mutex
		ran []int
	)
	done := make(chan struct{})
	start := time.Now()
	r.do(func() { <-block; mu.Lock(); ran = append(ran, 0); mu.Unlock() })
	for i := 1; i < 4; i++ {
		r.do(func() {
			mu.Lock()
			ran = append(ran, i)
			mu.Unlock()
			if i == 3 {
				close(done)
			}
		})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("do took %v while a release waited", d)
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	if len(ran) != 0 {
		t.Errorf("releases %v ran before the one ahead of them returned", ran)
	}
	mu.Unlock()
	close(block)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the releases did not run")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(ran, []int{0, 1, 2, 3}) {
		t.Errorf("releases ran in the order %v, want 0 1 2 3", ran)
	}
}
