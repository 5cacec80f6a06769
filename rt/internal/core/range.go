package core

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// Range is an NDRange: the global size in up to three dimensions and,
// optionally, the local (work-group) size and the global offset. It is
// plain data: Range1, Range2 and Range3 make one, and WithLocal and
// WithOffset set its sizes.
type Range struct {
	// A Range is plain data: rt, rt/codegen and rt/raw convert it for
	// free, and what WithLocal and WithOffset were given is in its fields,
	// each size as it was given, but for a size that is missing, which
	// holds missing, and a local size of 0, which holds zeroLocal (Local's
	// own 0 is "the device chooses"): so a launch's error shows the
	// caller's values.

	// Dims is the number of dimensions, 1 to 3. Dimension 0 is the one
	// that get_global_id(0) indexes, the fastest varying.
	Dims int
	// Global is the number of work-items in each dimension; 1 beyond
	// Dims.
	Global [3]int
	// Local is the work-group size: all zero lets the device choose;
	// otherwise a launch needs a size of 1 or more in each of the Dims
	// dimensions that divides the global size, and 0 beyond. WithLocal
	// sets it, each size as given (a 0 as a mark below every size, since
	// 0 here means none), and a mark below every size where it was given
	// none, so that the launch refuses a range that it was given too few
	// or too many sizes for, or a size below 1, and says what it was given.
	Local [3]int
	// Offset is the global work offset, which get_global_id adds and
	// get_global_offset returns (clEnqueueNDRangeKernel's
	// global_work_offset); all zero for none, and 0 or more in each
	// dimension otherwise. WithOffset sets it, each offset as given, and a
	// mark below every size where it was given none. The CUDA backend
	// launches no range with an offset: an error wrapping
	// errors.ErrUnsupported.
	Offset [3]int
}

// Range1 returns a one-dimensional range of n work-items.
func Range1(n int) Range { return Range{Dims: 1, Global: [3]int{n, 1, 1}} }

// Range2 returns a two-dimensional range, d0 work-items in dimension 0 and
// d1 in dimension 1.
func Range2(d0, d1 int) Range { return Range{Dims: 2, Global: [3]int{d0, d1, 1}} }

// Range3 returns a three-dimensional range.
func Range3(d0, d1, d2 int) Range { return Range{Dims: 3, Global: [3]int{d0, d1, d2}} }

// The marks that WithLocal and WithOffset put in Local or Offset, below
// any size a caller means: missing for a size they were not given, in a
// dimension of the range, or given beyond its dimensions where it would
// read as none (a 0) or with more than three sizes; zeroLocal for a local
// size of 0 in a dimension of the range.
const (
	missing   = math.MinInt
	zeroLocal = math.MinInt + 1
)

// WithLocal returns r with the work-group size set; give one size of 1 or
// more per dimension of r. A size below 1 is an error at launch, not "the
// device chooses": leave WithLocal out for that.
func (r Range) WithLocal(sizes ...int) Range {
	r.Local = fit(r.Dims, sizes, 1)
	return r
}

// WithOffset returns r with the global work offset set, one offset of 0
// or more per dimension of r: work-item ids run from the offset to the
// offset plus the global size.
func (r Range) WithOffset(offsets ...int) Range {
	r.Offset = fit(r.Dims, offsets, 0)
	return r
}

// fit returns sizes, one per dimension of a range of dims dimensions, as
// Local or Offset holds them: each size as given, but each dimension of
// the range that sizes leave out, and a zero size beyond the range's
// dimensions, is missing, and a zero size where least is 1 is zeroLocal,
// so that the launch's check refuses every count of sizes but dims, and
// every size below least, with the size given. More than three sizes are
// all missing.
func fit(dims int, sizes []int, least int) [3]int {
	if len(sizes) > 3 {
		return [3]int{missing, missing, missing}
	}
	var s [3]int
	for i := range 3 {
		switch {
		case i >= len(sizes):
			if i < dims {
				s[i] = missing
			}
		case sizes[i] == 0 && i >= dims:
			s[i] = missing
		case sizes[i] == 0 && least > 0:
			s[i] = zeroLocal
		default:
			s[i] = sizes[i]
		}
	}
	return s
}

// given returns a size of Local or Offset as WithLocal or WithOffset was
// given it: 0 for zeroLocal. It is not for missing.
func given(size int) int {
	if size == zeroLocal {
		return 0
	}
	return size
}

// hasLocal reports whether r sets a work-group size.
func (r Range) hasLocal() bool { return r.Local != [3]int{} }

// ndrange returns r as the driver takes it.
func (r *Range) ndrange() driver.NDRange {
	return driver.NDRange{Dims: r.Dims, Global: r.Global, Local: r.Local, Offset: r.Offset}
}

func (r Range) check() error {
	if r.Dims < 1 || r.Dims > 3 {
		return fmt.Errorf("range %v: %w: %d dimensions", r, ErrInvalidArgument, r.Dims)
	}
	local := r.hasLocal()
	for i := range 3 {
		if r.Offset[i] == missing {
			return r.missing("WithOffset", "offset", i)
		}
		if r.Offset[i] < 0 || i >= r.Dims && r.Offset[i] != 0 { // zeroLocal is for Local only
			return fmt.Errorf("range %v: %w: global offset %d in dimension %d of a %d-D range: give one offset, 0 or more, per dimension", r, ErrInvalidArgument, r.Offset[i], i, r.Dims)
		}
		if local && r.Local[i] == missing {
			return r.missing("WithLocal", "local size", i)
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
			return fmt.Errorf("range %v: %w: local size %d in dimension %d: give a positive size in every dimension, or none", r, ErrInvalidArgument, given(r.Local[i]), i)
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

// missing is the error of a size that fit marked missing in dimension i,
// given to with (WithLocal or WithOffset), which takes one of what per
// dimension.
func (r Range) missing(with, what string, i int) error {
	if i >= r.Dims {
		return fmt.Errorf("range %v: %w: %s was given more sizes than the range's %d dimensions", r, ErrInvalidArgument, with, r.Dims)
	}
	return fmt.Errorf("range %v: %w: %s was given no %s in dimension %d: give it one per dimension of the %d-D range", r, ErrInvalidArgument, with, what, i, r.Dims)
}

// String returns the global size, the local size after a slash where one
// is set, and the offset after a plus where one is set: "[64 64]/[16 16]",
// "[64]+[128]". Sizes beyond the range's dimensions are shown where they
// are set; each size as WithLocal or WithOffset was given it, and "_"
// where it was given none: "[32 32]/[8 _]".
func (r Range) String() string {
	d := min(max(r.Dims, 0), 3)
	s := fmt.Sprint(r.Global[:d])
	if r.hasLocal() {
		s += "/" + sizes(r.Local[:shown(d, r.Local)])
	}
	if r.Offset != [3]int{} {
		s += "+" + sizes(r.Offset[:shown(d, r.Offset)])
	}
	return s
}

// sizes formats sizes of Local or Offset as fmt.Sprint formats a slice,
// with what WithLocal or WithOffset was given in place of their marks.
func sizes(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		if n == missing {
			s[i] = "_"
		} else {
			s[i] = strconv.Itoa(given(n))
		}
	}
	return "[" + strings.Join(s, " ") + "]"
}

// shown returns how many of sizes String shows: d, or more up to the last
// that is set.
func shown(d int, sizes [3]int) int {
	n := d
	for i := d; i < 3; i++ {
		if sizes[i] != 0 {
			n = i + 1
		}
	}
	return n
}
