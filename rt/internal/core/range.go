package core

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// Range is rt.Range, which documents it.
type Range struct {
	Dims   int
	Global [3]int
	Local  [3]int // all zero: the device chooses, unless set by WithLocal
	// Offset is the global work offset, which get_global_id adds and
	// get_global_offset returns (clEnqueueNDRangeKernel's
	// global_work_offset); all zero for none. The CUDA backend launches
	// no range with an offset: an error wrapping errors.ErrUnsupported.
	Offset [3]int
	// nlocal is 1 + the number of sizes WithLocal was given, 0 if it was
	// not called: a range that asked for a work-group size must give a
	// positive one in every dimension, whatever the sizes are.
	nlocal int8
	// noffset is 1 + the number of offsets WithOffset was given, 0 if it
	// was not called.
	noffset int8
}

// Range1 is rt.Range1, which documents it.
func Range1(n int) Range { return Range{Dims: 1, Global: [3]int{n, 1, 1}} }

// Range2 is rt.Range2, which documents it.
func Range2(d0, d1 int) Range { return Range{Dims: 2, Global: [3]int{d0, d1, 1}} }

// Range3 is rt.Range3, which documents it.
func Range3(d0, d1, d2 int) Range { return Range{Dims: 3, Global: [3]int{d0, d1, d2}} }

// WithLocal returns r with the work-group size set; give one positive size
// per dimension of r. A zero size is an error at launch, not "the device
// chooses": leave WithLocal out for that.
func (r Range) WithLocal(sizes ...int) Range {
	r.Local = [3]int{}
	copy(r.Local[:], sizes)
	r.nlocal = int8(min(len(sizes), 100) + 1)
	return r
}

// WithOffset returns r with the global work offset set, one size per
// dimension of r: work-item ids run from the offset to the offset plus
// the global size.
func (r Range) WithOffset(offsets ...int) Range {
	r.Offset = [3]int{}
	copy(r.Offset[:], offsets)
	r.noffset = int8(min(len(offsets), 100) + 1)
	return r
}

// same reports whether r and o are equal: r == o, field by field rather
// than through the runtime's memory comparison (a launch makes it).
func (r *Range) same(o *Range) bool {
	return r.Global == o.Global && r.Local == o.Local && r.Dims == o.Dims && r.nlocal == o.nlocal && r.Offset == o.Offset && r.noffset == o.noffset
}

// hasLocal reports whether r sets a work-group size: through WithLocal,
// or in Local.
func (r Range) hasLocal() bool { return r.nlocal > 0 || r.Local != [3]int{} }

// ndrange returns r as the driver takes it.
func (r Range) ndrange() driver.NDRange {
	return driver.NDRange{Dims: r.Dims, Global: r.Global, Local: r.Local, Offset: r.Offset}
}

func (r Range) check() error {
	if r.Dims < 1 || r.Dims > 3 {
		return fmt.Errorf("range %v: %w: %d dimensions", r, ErrInvalidArgument, r.Dims)
	}
	if n := int(r.nlocal) - 1; n >= 0 && n != r.Dims {
		return fmt.Errorf("range %v: %w: %d-D range given %d local size%s", r, ErrInvalidArgument, r.Dims, n, plural(n))
	}
	if n := int(r.noffset) - 1; n >= 0 && n != r.Dims {
		return fmt.Errorf("range %v: %w: %d-D range given %d offset%s", r, ErrInvalidArgument, r.Dims, n, plural(n))
	}
	local := r.hasLocal()
	for i := range 3 {
		if r.Offset[i] < 0 || i >= r.Dims && r.Offset[i] != 0 {
			return fmt.Errorf("range %v: %w: global offset %d in dimension %d of a %d-D range: give one offset, 0 or more, per dimension", r, ErrInvalidArgument, r.Offset[i], i, r.Dims)
		}
		if i >= r.Dims {
			if local && r.Local[i] != 0 {
				return fmt.Errorf("range %v: %w: local size %d in dimension %d of a %d-D range", r, ErrInvalidArgument, r.Local[i], i, r.Dims)
			}
			continue
		}
		if r.Global[i] <= 0 {
			return fmt.Errorf("range %v: %w: global size %d in dimension %d", r, ErrInvalidArgument, r.Global[i], i)
		}
		if !local {
			continue
		}
		if r.Local[i] <= 0 {
			return fmt.Errorf("range %v: %w: local size %d in dimension %d: give a positive size in every dimension, or none", r, ErrInvalidArgument, r.Local[i], i)
		}
		if r.Global[i]%r.Local[i] != 0 {
			return fmt.Errorf("range %v: %w: local size %d does not divide global size %d in dimension %d", r, ErrInvalidArgument, r.Local[i], r.Global[i], i)
		}
	}
	return r.checkSize()
}

// checkSize checks that r's work-items, and its work-item ids, can be
// counted in a size_t (at most math.MaxInt here): the product of the
// global sizes, and each offset plus its global size. r has positive
// global sizes and offsets of 0 or more.
func (r Range) checkSize() error {
	n := 1
	for i := range r.Dims {
		g := r.Global[i]
		if r.Offset[i] > math.MaxInt-g {
			return fmt.Errorf("range %v: %w: offset %d plus global size %d in dimension %d is more than a size_t holds", r, ErrInvalidArgument, r.Offset[i], g, i)
		}
		if n > math.MaxInt/g {
			return fmt.Errorf("range %v: %w: %s work-items in all, more than a size_t holds (%d)", r, ErrInvalidArgument, product(r.Global[:r.Dims]), math.MaxInt)
		}
		n *= g
	}
	return nil
}

// product writes the product of ns exactly, as "a×b×c = n", or as "a×b×c"
// where it overflows an int.
func product(ns []int) string {
	s := make([]string, len(ns))
	n, exact := 1, true
	for i, v := range ns {
		s[i] = strconv.Itoa(v)
		if exact && v != 0 && n > math.MaxInt/v {
			exact = false
		}
		n *= v
	}
	if exact && len(ns) > 1 {
		return strings.Join(s, "×") + " = " + strconv.Itoa(n)
	}
	return strings.Join(s, "×")
}

// String returns the global size, the local size after a slash where one
// is set, and the offset after a plus where one is set: "[64 64]/[16 16]",
// "[64]+[128]".
func (r Range) String() string {
	d := min(max(r.Dims, 0), 3)
	s := fmt.Sprint(r.Global[:d])
	if r.nlocal > 0 {
		s += "/" + fmt.Sprint(r.Local[:min(int(r.nlocal)-1, 3)])
	} else if r.hasLocal() {
		s += "/" + fmt.Sprint(r.Local[:d])
	}
	if r.Offset != [3]int{} {
		s += "+" + fmt.Sprint(r.Offset[:d])
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
