package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Range is an NDRange: the global size in up to three dimensions and,
// optionally, the local (work-group) size. Dimension 0 is the one that
// get_global_id(0) indexes, the fastest varying.
type Range = core.Range

// Range1 returns a one-dimensional range of n work-items.
func Range1(n int) Range {
	return core.Range1(n)
}

// Range2 returns a two-dimensional range, d0 work-items in dimension 0 and
// d1 in dimension 1.
func Range2(d0, d1 int) Range {
	return core.Range2(d0, d1)
}

// Range3 returns a three-dimensional range.
func Range3(d0, d1, d2 int) Range {
	return core.Range3(d0, d1, d2)
}
