package alloc

import "math/bits"

// binNumber returns the size class of size (>= 1) with mb mantissa bits:
// PyOpenCL's memory_pool::bin_number. The class is floor(log2(size)) shifted
// left by mb, or'ed with the mb bits below the leading one.
func binNumber(size int64, mb uint) int {
	l := uint(bits.Len64(uint64(size))) - 1
	var shifted uint64
	if l >= mb {
		shifted = uint64(size) >> (l - mb)
	} else {
		shifted = uint64(size) << (mb - l)
	}
	chopped := shifted & (1<<mb - 1)
	return int(l<<mb | uint(chopped))
}

// binSize returns the largest size of class bin, which is what the pool
// asks the driver for: PyOpenCL's memory_pool::alloc_size. Every size whose
// class is bin is at most binSize(bin).
func binSize(bin int, mb uint) int64 {
	exp := bin >> mb
	head := uint64(1<<mb | bin&(1<<mb-1))
	shift := exp - int(mb)
	if shift < 0 {
		return int64(head >> uint(-shift))
	}
	ones := uint64(1)<<uint(shift) - 1
	return int64(head<<uint(shift) | ones)
}
