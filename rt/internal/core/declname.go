package core

import (
	"debug/elf"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Naming a declaration that is not registered. Generated code registers
// each handle by its address; a //dgen: declaration added since the last
// go generate has no registration, so nothing in the program says what it
// is called but the executable's symbol table, which maps the handle's
// address to its variable's name (example.com/hotspot.Kernels). The error
// also says where the handle was used, the first caller outside rt, with
// that line of source where the file is at hand: that names the variable
// where the executable has no symbols (`go run`, `go test` and
// -ldflags=-s strip them, and only ELF's are read).

// unregistered returns the error of using the handle at addr, a kind
// ("program", "allocation site", ...), that no generated code registered:
// it names the variable, where the executable's symbols tell, and the call
// that used it.
func unregistered(kind string, addr unsafe.Pointer) error {
	where := userCaller()
	if name := symbolAt(uintptr(addr)); name != "" {
		return fmt.Errorf("%s %s (used at %s): %w", kind, name, where, errNotRegistered)
	}
	return fmt.Errorf("%s used at %s: %w", kind, where, errNotRegistered)
}

// errNotRegistered is the error of using a declaration that is not
// registered: its package was not generated, or a package-level variable
// initializer used it before the generated registration ran.
var errNotRegistered = fmt.Errorf("%w (or it was used by a package-level variable initializer, which Go may run before the generated registration: use it from an init function or later)", ErrNotGenerated)

// rtPackages are the packages whose frames userCaller skips: rt and its
// facades over this one.
var rtPackages = map[string]bool{
	"github.com/dgen-go/dgen/rt":               true,
	"github.com/dgen-go/dgen/rt/internal/core": true,
	"github.com/dgen-go/dgen/rt/codegen":       true,
	"github.com/dgen-go/dgen/rt/raw":           true,
}

// userCaller returns "file:line" of the first frame of the calling
// goroutine's stack outside rt's packages, followed by that line of the
// file, quoted, where it can be read.
func userCaller() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !rtPackages[funcPackage(f.Function)] {
			if line := sourceLine(f.File, f.Line); line != "" {
				return fmt.Sprintf("%s:%d (%q)", f.File, f.Line, line)
			}
			return fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		if !more {
			return "an unknown place"
		}
	}
}

// sourceLine returns line n of file without its surrounding space, ""
// where it cannot be read.
func sourceLine(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil || n < 1 {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}

// funcPackage returns the package path of a function's full name
// ("example.com/a/b.(*T).M" is in "example.com/a/b").
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return fn
}

// dataSymbol is a variable of the executable: its address in memory and
// its size.
type dataSymbol struct {
	addr, size uintptr
	name       string
}

// symbolAnchor is a variable whose address in memory, against its address
// in the symbol table, gives how far the executable was moved when it was
// loaded (a position-independent executable).
var symbolAnchor byte

const anchorName = "github.com/dgen-go/dgen/rt/internal/core.symbolAnchor"

// dataSymbols are the executable's variables by address, read once, at
// the first error that needs them; nil where they cannot be read.
var dataSymbols = sync.OnceValue(func() []dataSymbol {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	f, err := elf.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil
	}
	var ds []dataSymbol
	slide := uintptr(0)
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_OBJECT || s.Size == 0 {
			continue
		}
		if s.Name == anchorName {
			slide = uintptr(unsafe.Pointer(&symbolAnchor)) - uintptr(s.Value)
		}
		ds = append(ds, dataSymbol{addr: uintptr(s.Value), size: uintptr(s.Size), name: s.Name})
	}
	for i := range ds {
		ds[i].addr += slide
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].addr < ds[j].addr })
	return ds
})

// symbolAt returns the name of the variable at addr, "" where the
// executable's symbols do not tell.
func symbolAt(addr uintptr) string {
	ds := dataSymbols()
	i := sort.Search(len(ds), func(i int) bool { return ds[i].addr > addr }) - 1
	if i < 0 || addr >= ds[i].addr+ds[i].size {
		return ""
	}
	return ds[i].name
}
