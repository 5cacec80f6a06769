//go:build !linux

package trace

import "unsafe"

// populate faults in the n bytes of the mapping at p, page-aligned, for
// writing, without changing what they hold.
func populate(p unsafe.Pointer, n uint64) { touch(p, n) }
