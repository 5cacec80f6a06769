//go:build cgo

package opencl

import (
	"errors"
	"slices"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// TestQueuePriority: a device runs a queue at each priority where it
// reports cl_khr_priority_hints, and at PriorityNormal where it does not,
// as PoCL does; there, NewQueueOptions at another priority is an error
// wrapping errors.ErrUnsupported, and at PriorityNormal a queue as
// NewQueue makes it.
func TestQueuePriority(t *testing.T) {
	c := cpuContext(t)
	info, err := deviceInfo(c.devs[0])
	if err != nil {
		t.Fatal(err)
	}
	has := slices.Contains(info.Extensions, "cl_khr_priority_hints")
	for _, p := range []driver.Priority{driver.PriorityNormal, driver.PriorityHigh, driver.PriorityLow} {
		want := p
		if !has {
			want = driver.PriorityNormal
		}
		if got := c.QueuePriority(0, p); got != want {
			t.Errorf("QueuePriority(%d) = %d, want %d (cl_khr_priority_hints: %v)", p, got, want, has)
		}
		q, err := c.NewQueueOptions(0, driver.QueueOptions{Priority: p})
		if !has && p != driver.PriorityNormal {
			if !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("NewQueueOptions at %d without the extension: %v, want ErrUnsupported", p, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("NewQueueOptions at %d: %v", p, err)
		}
		if err := errors.Join(q.Finish(), q.Release()); err != nil {
			t.Error(err)
		}
	}
}
