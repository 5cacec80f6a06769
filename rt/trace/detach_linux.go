package trace

import (
	"syscall"
	"unsafe"
)

const mapNoReserve = syscall.MAP_NORESERVE

// detach replaces the shared mapping at mem by private anonymous pages
// that reserve no memory: late stores land there, harmlessly, and the
// file's pages are released.
func detach(mem unsafe.Pointer, size uint64) error {
	_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, uintptr(mem), uintptr(size),
		syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_FIXED|syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE, ^uintptr(0), 0)
	if errno != 0 {
		return errno
	}
	return nil
}
