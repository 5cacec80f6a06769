package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// DriverMode is the mode in which every allocation comes from the driver
// (rt.NewBuffer) and every free goes back to it: Futhark's code before its
// 2018 allocator, the baseline of the table.
const DriverMode = "driver"

// Policies are the allocator policies (DGEN_ALLOC_POLICY values) a run
// compares with DriverMode.
var Policies = []string{"full", "tagged", "bestfit"}

// Modes returns every mode of a run: DriverMode, then each policy.
func Modes() []string {
	m := []string{DriverMode}
	for _, p := range Policies {
		m = append(m, string(p))
	}
	return m
}

// Env is where a program runs: a context and its queue, and whether
// allocations bypass the allocator.
type Env struct {
	Ctx    *rt.Context
	Q      *rt.Queue
	Mode   string
	Driver bool // every allocation from the driver
	// Pinned makes the programs read their per-iteration flag into pinned
	// memory (rt.NewPinned) rather than into a Go value.
	Pinned bool
	flag   *rt.Pinned[byte] // allocated at the first read when Pinned
}

// OpenEnv opens a context on the device that the environment selects, with
// the allocator policy that mode names (the default policy for DriverMode).
func OpenEnv(mode string) (*Env, error) {
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("suite: open %s: %w", mode, err)
	}
	e := &Env{Mode: mode, Driver: mode == DriverMode}
	if !e.Driver {
		if err := cfg.AllocPolicy.UnmarshalText([]byte(mode)); err != nil {
			return nil, fmt.Errorf("suite: open %s: %w", mode, err)
		}
	}
	if e.Ctx, err = rt.OpenConfig(cfg); err != nil {
		return nil, fmt.Errorf("suite: open %s: %w", mode, err)
	}
	e.Q = e.Ctx.Queue()
	return e, nil
}

// Close frees the flag's pinned memory and closes the context.
func (e *Env) Close() error {
	var err error
	if e.flag != nil {
		err = e.flag.Free()
	}
	return errors.Join(err, e.Ctx.Close())
}

// readFlag reads a 4-byte device global: the convergence flag that
// k-means, BFS and Canny read every iteration. With e.Pinned it reads into
// pinned memory, which spares a GPU driver the copy through its own
// staging buffer.
func readFlag[T int32 | uint32](e *Env, g *rt.DeviceGlobal[T]) (T, error) {
	if !e.Pinned {
		return g.Read(e.Q)
	}
	if e.flag == nil {
		f, err := rt.NewPinned[byte](e.Q, 4)
		if err != nil {
			return 0, err
		}
		e.flag = f
	}
	b := e.flag.Slice()
	if err := g.ReadBytes(e.Q, 0, b); err != nil {
		return 0, err
	}
	return T(binary.NativeEndian.Uint32(b)), nil
}

// alloc allocates n elements at site, or from the driver in DriverMode.
func alloc[T any](e *Env, site *rt.AllocSite[T], n int) (rt.Buffer[T], error) {
	if e.Driver {
		return rt.NewBuffer[T](e.Ctx, n)
	}
	return site.Alloc(e.Q, n)
}

// allocOut allocates n elements for a kernel spec's dgen:"out" field
// through its generated method allocField, or from the driver into field in
// DriverMode.
func allocOut[T any](e *Env, allocField func(*rt.Queue, int) error, field *rt.Buffer[T], n int) error {
	if e.Driver {
		b, err := rt.NewBuffer[T](e.Ctx, n)
		*field = b
		return err
	}
	return allocField(e.Q, n)
}

// upload allocates a driver buffer (inputs live for a whole case, outside
// the timed runs) holding src.
func upload[T any](e *Env, src []T) (rt.Buffer[T], error) {
	b, err := rt.NewBuffer[T](e.Ctx, max(len(src), 1))
	if err != nil {
		return b, err
	}
	if len(src) > 0 {
		if err := b.Write(e.Q, src); err != nil {
			return b, errors.Join(err, b.Free())
		}
	}
	return b, nil
}

// download reads every element of b.
func download[T any](e *Env, b rt.Buffer[T]) ([]T, error) {
	dst := make([]T, b.Len())
	return dst, b.Read(e.Q, dst)
}

// freer is a buffer that free gives back: an rt.Buffer of any element
// type.
type freer interface {
	Len() int
	Free() error
}

// free frees every buffer that is not nil or the zero Buffer, and joins
// the errors.
func free(bs ...freer) error {
	var errs []error
	for _, b := range bs {
		if b != nil && b.Len() > 0 {
			errs = append(errs, b.Free())
		}
	}
	return errors.Join(errs...)
}

// Dataset is one input of a program: Futhark's name for it, the sizes that
// stand for it on the GPU (the table's) and at small scale (PoCL), and the
// speedup Futhark published for its allocator on it (0: none published).
type Dataset struct {
	Name    string
	Futhark float64
	GPU     Size
	Small   Size
}

// Size is a program's size parameters; each program documents its own.
type Size struct {
	N int `json:"n"`
	M int `json:"m,omitempty"`
	K int `json:"k,omitempty"`
}

// Case is one program on one dataset, its inputs on the device.
type Case interface {
	// Run computes the result on the device from the inputs, allocating
	// as the program does; the result stays on the device until the next
	// Run or Close.
	Run() error
	// Verify reads the last result and compares it with the Go reference.
	Verify() error
	// Close frees the inputs and the last result.
	Close() error
}

// Program is one program of the suite.
type Program struct {
	Name     string
	Source   string // the Futhark benchmark it stands for
	Datasets []Dataset
	// Test is the size go test verifies.
	Test Size
	// New makes the inputs of size s from seed and uploads them.
	New func(e *Env, s Size, seed uint64) (Case, error)
}

// Programs is the suite, in the order of Futhark's table.
var Programs = []Program{canny, kmeans, ray, optionPricing, crypt, bfs, lavaMD, lud, hotspot}

// Lookup returns the program named name.
func Lookup(name string) (Program, error) {
	for _, p := range Programs {
		if p.Name == name {
			return p, nil
		}
	}
	return Program{}, fmt.Errorf("suite: %w: no program %q", rt.ErrInvalidArgument, name)
}

// mismatch returns an error for a result that differs from the reference
// at index i.
func mismatch[T any](what string, i int, got, want T) error {
	return fmt.Errorf("%s[%d] = %v, want %v", what, i, got, want)
}

// equal compares got with want element by element.
func equal[T comparable](what string, got, want []T) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return mismatch(what, i, got[i], want[i])
		}
	}
	return nil
}

// near compares got with want within abs + rel*|want| per element.
func near(what string, got, want []float32, abs, rel float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if !(g-w <= abs+rel*max(w, -w) && w-g <= abs+rel*max(w, -w)) { // NaN fails
			return mismatch(what, i, got[i], want[i])
		}
	}
	return nil
}
