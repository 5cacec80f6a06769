//go:build cgo

package cuda

import (
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// TestStreamPriority: rt's priorities map onto CUDA's range, whose
// greatest priority is numerically the lowest: PriorityHigh to the
// greatest, PriorityLow to the least, PriorityNormal to CUDA's default 0;
// a priority that maps to normal's CUDA priority runs at PriorityNormal.
func TestStreamPriority(t *testing.T) {
	const (
		normal = driver.PriorityNormal
		high   = driver.PriorityHigh
		low    = driver.PriorityLow
	)
	type want struct {
		cuda   int
		runsAt driver.Priority
	}
	tests := []struct {
		name string
		r    priorityRange
		p    driver.Priority
		want want
	}{
		{"H100 high", priorityRange{0, -5}, high, want{-5, high}},
		{"H100 normal", priorityRange{0, -5}, normal, want{0, normal}},
		{"H100 low is the default", priorityRange{0, -5}, low, want{0, normal}},
		{"older GPU high", priorityRange{0, -1}, high, want{-1, high}},
		{"no priorities high", priorityRange{0, 0}, high, want{0, normal}},
		{"no priorities low", priorityRange{0, 0}, low, want{0, normal}},
		{"default inside high", priorityRange{2, -3}, high, want{-3, high}},
		{"default inside low", priorityRange{2, -3}, low, want{2, low}},
		{"default inside normal", priorityRange{2, -3}, normal, want{0, normal}},
		{"default above the range", priorityRange{-2, -4}, normal, want{-2, normal}},
		{"default above the range low", priorityRange{-2, -4}, low, want{-2, normal}},
		{"default below the range", priorityRange{4, 1}, normal, want{1, normal}},
		{"default below the range high", priorityRange{4, 1}, high, want{1, normal}},
		{"default below the range low", priorityRange{4, 1}, low, want{4, low}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cuda, runsAt := streamPriority(tt.p, tt.r)
			if got := (want{cuda, runsAt}); got != tt.want {
				t.Errorf("streamPriority(%d, [%d, %d]) = %d, %d; want %d, %d",
					tt.p, tt.r.least, tt.r.greatest, cuda, runsAt, tt.want.cuda, tt.want.runsAt)
			}
		})
	}
}
