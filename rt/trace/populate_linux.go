package trace

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later).
const madvPopulateWrite = 23

// populate faults in the n bytes of the mapping at p, page-aligned, for
// writing, without changing what they hold.
func populate(p unsafe.Pointer, n uint64) {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(p), uintptr(n), madvPopulateWrite); errno != 0 {
		touch(p, n)
	}
}
