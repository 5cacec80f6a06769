package desc

import "unsafe"

// ScalarBits returns the bytes of v, of at most 8, as a uint64 in the
// machine's byte order. Numbers are read at their own width: a narrow
// store into a wider word that is then read back whole stalls the
// processor's store forwarding, on every argument of every launch.
func ScalarBits[T any](v T) uint64 {
	p, size := unsafe.Pointer(&v), unsafe.Sizeof(v)
	var bits uint64
	switch size {
	case 1:
		bits = uint64(*(*uint8)(p))
	case 2:
		bits = uint64(*(*uint16)(p))
	case 4:
		bits = uint64(*(*uint32)(p))
	case 8:
		return *(*uint64)(p)
	default:
		*(*T)(unsafe.Pointer(&bits)) = v
		return bits
	}
	if bigEndian { // move the number to the word's first bytes in memory
		bits <<= 64 - 8*size
	}
	return bits
}
