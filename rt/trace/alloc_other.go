//go:build unix && !linux

package trace

import "os"

// allocateFile extends f to size bytes. Without fallocate the blocks are
// allocated when written.
func allocateFile(f *os.File, size int64) error {
	return f.Truncate(size)
}
