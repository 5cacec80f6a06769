//go:build !unix

package trace

import (
	"errors"
	"unsafe"
)

var errNoMap = errors.New("trace files need a Unix system (a shared mapping of the file)")

func openRecFile(path string, ringBytes uint64, start int64) (*recFile, error) {
	return nil, errNoMap
}

func (r *recFile) grow(need uint64) bool { return false }
func (r *recFile) bytes() []byte         { return unsafe.Slice((*byte)(r.mem), 0) }
func (r *recFile) used() uint64          { return 0 }
func (r *recFile) unmap() error          { return errNoMap }
