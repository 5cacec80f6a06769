//go:build !linux

package trace

import "unsafe"

// populate faults in the n bytes of the mapping at p, page-aligned, for
// writing, without changing what they hold. It reports true: a page past
// the end of a truncated file faults in touch, under the caller's guard.
func populate(p unsafe.Pointer, n uint64) bool {
	touch(p, n)
	return true
}
