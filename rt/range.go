package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Range is an NDRange: the global size in up to three dimensions and,
// optionally, the local (work-group) size and the global offset. It is
// plain data: Range1, Range2 and Range3 make one, and WithLocal and
// WithOffset set its sizes.
type Range struct {
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
func Range1(n int) Range { return Range(core.Range1(n)) }

// Range2 returns a two-dimensional range, d0 work-items in dimension 0 and
// d1 in dimension 1.
func Range2(d0, d1 int) Range { return Range(core.Range2(d0, d1)) }

// Range3 returns a three-dimensional range.
func Range3(d0, d1, d2 int) Range { return Range(core.Range3(d0, d1, d2)) }

// WithLocal returns r with the work-group size set; give one size of 1 or
// more per dimension of r. A size below 1 is an error at launch, not "the
// device chooses": leave WithLocal out for that.
func (r Range) WithLocal(sizes ...int) Range { return Range(core.Range(r).WithLocal(sizes...)) }

// WithOffset returns r with the global work offset set, one offset of 0
// or more per dimension of r: work-item ids run from the offset to the
// offset plus the global size.
func (r Range) WithOffset(offsets ...int) Range { return Range(core.Range(r).WithOffset(offsets...)) }

// String returns the global size, the local size after a slash where one
// is set, and the offset after a plus where one is set: "[64 64]/[16 16]",
// "[64]+[128]"; each size as WithLocal or WithOffset was given it, and "_"
// where it was given none.
func (r Range) String() string { return core.Range(r).String() }
