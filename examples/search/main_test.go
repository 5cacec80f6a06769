package main

import (
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// TestTwoIndexes is the newcomer's case of issue 44: two indexes whose
// vectors have different lengths (Dim 64 and 128) on one context, queried
// by 8 goroutines at once, each on a queue of its own, while another
// goroutine sets the context's Dim to one value after another. Every
// query finds its own vector with a score of 1: the context's value
// changes neither index's launches.
func TestTwoIndexes(t *testing.T) {
	testenv.RequireDevice(t)
	if os.Getenv("DGEN_DEVICE") == "" {
		t.Setenv("DGEN_DEVICE", "cpu")
	}
	ctx, err := rt.Open()
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	r := rand.New(rand.NewPCG(3, 4))
	dims := []int{64, 128}
	idxs := make([]*Index, len(dims))
	data := make([][][]float32, len(dims))
	for i, dim := range dims {
		data[i] = randomVectors(r, dim, 300)
		if idxs[i], err = NewIndex(q, dim, data[i]); err != nil {
			t.Fatal(err)
		}
		defer idxs[i].Free()
		if best, _, err := idxs[i].Nearest(q, data[i][0]); err != nil || best != 0 { // build both variants
			t.Fatalf("index %d: %d, %v", dim, best, err)
		}
	}
	stop := make(chan struct{})
	var setter sync.WaitGroup
	setter.Add(1)
	go func() { // elsewhere in the program
		defer setter.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := Dim.Set(ctx, []int32{64, 128, 32}[i%3]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var mu sync.Mutex
	queries, wrong := 0, 0
	var wg sync.WaitGroup
	deadline := time.Now().Add(time.Second)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gq, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				t.Error(err)
				return
			}
			for n := 0; time.Now().Before(deadline); n++ {
				i, v := (g+n)%2, (g*31+n*7)%300
				best, score, err := idxs[i].Nearest(gq, data[i][v])
				mu.Lock()
				queries++
				if err != nil || best != v || math.Abs(float64(score)-1) > 1e-4 {
					wrong++
					if wrong == 1 {
						t.Errorf("index of %d-element vectors: vector %d found %d, score %g (%v); want itself, score 1", dims[i], v, best, score, err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	setter.Wait()
	t.Logf("%d queries, %d wrong", queries, wrong)
	if queries < 16 {
		t.Errorf("%d queries: the goroutines did not run", queries)
	}
}

// TestRun runs the command's own check: vector 100 of each index.
func TestRun(t *testing.T) {
	testenv.RequireDevice(t)
	if os.Getenv("DGEN_DEVICE") == "" {
		t.Setenv("DGEN_DEVICE", "cpu")
	}
	answers, err := run()
	if err != nil || len(answers) != 2 {
		t.Fatalf("run = %+v, %v", answers, err)
	}
}
