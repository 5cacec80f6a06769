package trace

import (
	"os"
	"syscall"
)

// allocateFile gives f disk blocks for its first size bytes, so that a
// full disk fails here rather than as a SIGBUS at a store to the mapping.
func allocateFile(f *os.File, size int64) error {
	for {
		err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EOPNOTSUPP {
			return f.Truncate(size)
		}
		return err
	}
}
