//go:build unix

package diskcache

import (
	"os"
	"syscall"
)

// openNoFollow opens path with flag and perm, never following a symbolic
// link in its last element (the kernel refuses it with ELOOP) and, when
// reading, never blocking on a FIFO or a device in place of a file.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		flag |= syscall.O_NONBLOCK
	}
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}
