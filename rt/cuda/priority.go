//go:build cgo

package cuda

import "github.com/dgen-go/dgen/rt/driver"

// Stream priorities. CUDA numbers them so that a lower number is a
// greater priority: a context's range (cuCtxGetStreamPriorityRange) runs
// from its least, numerically the greatest, to its greatest, and a stream
// made with no priority (cuStreamCreate) has priority 0, which on NVIDIA's
// GPUs is the least (an H100's range is 0 to -5).

var _ driver.PriorityContext = (*context)(nil)

// priorityRange is a context's stream priorities, as
// cuCtxGetStreamPriorityRange reports them: least >= greatest.
type priorityRange struct{ least, greatest int }

// streamPriority maps rt's priority p onto CUDA's range r: PriorityHigh
// to the greatest, PriorityLow to the least, PriorityNormal to CUDA's
// default, 0, clamped into the range. It returns the CUDA priority and
// the one of rt's that a stream made at it runs at: p, or PriorityNormal
// where p maps to the same CUDA priority as PriorityNormal (a range of one
// priority, or PriorityLow where the default is the least).
func streamPriority(p driver.Priority, r priorityRange) (cuda int, runsAt driver.Priority) {
	normal := min(max(0, r.greatest), r.least)
	switch p {
	case driver.PriorityHigh:
		cuda = r.greatest
	case driver.PriorityLow:
		cuda = r.least
	default:
		return normal, driver.PriorityNormal
	}
	if cuda == normal {
		return cuda, driver.PriorityNormal
	}
	return cuda, p
}

// QueuePriority implements driver.PriorityContext: the priority that
// streamPriority says a stream of device dev made at p runs at.
func (c *context) QueuePriority(dev int, p driver.Priority) driver.Priority {
	if dev < 0 || dev >= len(c.devs) {
		return driver.PriorityNormal
	}
	_, runsAt := streamPriority(p, c.devs[dev].priorities)
	return runsAt
}
