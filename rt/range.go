package rt

import (
	"fmt"
	"math"
)

// Range is an NDRange: the global size in up to three dimensions and,
// optionally, the local (work-group) size. Dimension 0 is the one that
// get_global_id(0) indexes, the fastest varying.
type Range struct {
	Dims   int
	Global [3]int
	Local  [3]int // all zero: the device chooses
}

// Range1 returns a one-dimensional range of n work-items.
func Range1(n int) Range { return Range{Dims: 1, Global: [3]int{n, 1, 1}} }

// Range2 returns a two-dimensional range, d0 work-items in dimension 0 and
// d1 in dimension 1.
func Range2(d0, d1 int) Range { return Range{Dims: 2, Global: [3]int{d0, d1, 1}} }

// Range3 returns a three-dimensional range.
func Range3(d0, d1, d2 int) Range { return Range{Dims: 3, Global: [3]int{d0, d1, d2}} }

// WithLocal returns r with the work-group size set; give one size per
// dimension of r.
func (r Range) WithLocal(sizes ...int) Range {
	r.Local = [3]int{}
	for i := 0; i < len(sizes) && i < 3; i++ {
		r.Local[i] = sizes[i]
	}
	if len(sizes) != r.Dims {
		r.Local = [3]int{len(sizes), wrongCount} // caught by check
	}
	return r
}

// wrongCount in Local[1] marks a range that WithLocal was given the wrong
// number of sizes, their number in Local[0]. (Range converts to the
// driver's NDRange, so it can have no field of its own for this.)
const wrongCount = math.MinInt

// hasLocal reports whether r sets a work-group size.
func (r Range) hasLocal() bool { return r.Local != [3]int{} }

func (r Range) check() error {
	if r.Dims < 1 || r.Dims > 3 {
		return fmt.Errorf("range %v: %w: %d dimensions", r, ErrInvalidArgument, r.Dims)
	}
	if r.Local[1] == wrongCount {
		return fmt.Errorf("range %v: %w: %d-D range given %d local size%s", r, ErrInvalidArgument, r.Dims, r.Local[0], plural(r.Local[0]))
	}
	for i := 0; i < r.Dims; i++ {
		if r.Global[i] <= 0 {
			return fmt.Errorf("range %v: %w: global size %d in dimension %d", r, ErrInvalidArgument, r.Global[i], i)
		}
		if r.hasLocal() && (r.Local[i] <= 0 || r.Global[i]%r.Local[i] != 0) {
			return fmt.Errorf("range %v: %w: local size %d does not divide global size %d in dimension %d", r, ErrInvalidArgument, r.Local[i], r.Global[i], i)
		}
	}
	return nil
}

func (r Range) String() string {
	d := min(max(r.Dims, 0), 3)
	s := fmt.Sprint(r.Global[:d])
	if r.hasLocal() && r.Local[1] != wrongCount {
		s += "/" + fmt.Sprint(r.Local[:d])
	}
	return s
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
