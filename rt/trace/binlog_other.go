//go:build !unix

package trace

import (
	"errors"
	"os"
	"unsafe"
)

var errNoMap = errors.New("trace files need a Unix system (a shared mapping of the file)")

func openGen(f *os.File, ringBytes uint64, start int64, owner *recFile) (*recGen, error) {
	f.Close()
	return nil, errNoMap
}

func (g *recGen) grow(need uint64) bool    { return false }
func (g *recGen) shrunk(lim uint64) bool   { return false }
func (g *recGen) moved(name string) string { return "" }
func (g *recGen) bytes() []byte            { return unsafe.Slice((*byte)(g.mem), 0) }
func (g *recGen) used() uint64             { return 0 }
func (g *recGen) unmap() error             { return errNoMap }
