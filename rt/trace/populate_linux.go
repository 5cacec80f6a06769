package trace

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later).
const madvPopulateWrite = 23

// populate faults in the n bytes of the mapping at p, page-aligned, for
// writing, without changing what they hold. It reports false when the
// pages are past the end of the file (truncated under the mapping).
func populate(p unsafe.Pointer, n uint64) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(p), uintptr(n), madvPopulateWrite)
	switch errno {
	case 0:
		return true
	case syscall.EFAULT:
		return false
	}
	touch(p, n) // a kernel without MADV_POPULATE_WRITE
	return true
}
