package rt

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// BuiltProgram is a program built for every device of its context: the
// executable form of a device image.
type BuiltProgram struct {
	ctx      *Context
	drv      driver.Program
	name     string
	released atomic.Bool
}

// buildRequest is what the build seam receives: source to compile, or
// binaries to load.
type buildRequest struct {
	name     string
	source   string
	binaries [][]byte
	options  string
}

// BuildProgram compiles source with the build options for every device of
// the context. name names the program in errors. A compile error is
// returned wrapping ErrBuildFailed, with the build log.
func (c *Context) BuildProgram(name, source, options string) (*BuiltProgram, error) {
	return c.build(buildRequest{name: name, source: source, options: options})
}

// LoadProgram creates a program from binaries, one per device of the
// context in order, as BuiltProgram.Binaries returned them.
func (c *Context) LoadProgram(name string, binaries [][]byte, options string) (*BuiltProgram, error) {
	if c == nil {
		return nil, fmt.Errorf("load program %q: %w: nil context", name, ErrInvalidArgument)
	}
	if len(binaries) != len(c.devices) {
		return nil, fmt.Errorf("load program %q: %w: %d binaries for %d devices", name, ErrInvalidArgument, len(binaries), len(c.devices))
	}
	return c.build(buildRequest{name: name, binaries: binaries, options: options})
}

// buildDirect makes a program through the backend, bypassing the cache.
func (c *Context) buildDirect(req buildRequest) (*BuiltProgram, error) {
	if req.binaries != nil { // a program from source had its options checked by ProgramFor
		if err := checkOptions(req.options, optionsFromAPI); err != nil {
			return nil, fmt.Errorf("load program %q: %w", req.name, err)
		}
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	var (
		drv driver.Program
		err error
		op  = "build"
		t0  = c.traceNow()
	)
	if req.binaries != nil {
		op = "load"
		drv, err = c.drv.LoadProgram(req.binaries, req.options)
	} else {
		drv, err = c.drv.BuildProgram(req.source, req.options)
	}
	if err != nil {
		return nil, fmt.Errorf("%s program %q for %s: %w", op, req.name, c.deviceLabel(), err)
	}
	if req.binaries == nil && t0 != 0 {
		c.traceCache(0, trace.Cache{Op: trace.Build, Program: req.name, Duration: c.tr.Now() - t0})
	}
	return &BuiltProgram{ctx: c, drv: drv, name: req.name}, nil
}

func (c *Context) deviceLabel() string {
	if len(c.devices) == 1 {
		return fmt.Sprintf("device %q", c.devices[0].Name)
	}
	var infos []driver.DeviceInfo
	for _, d := range c.devices {
		infos = append(infos, d.DeviceInfo)
	}
	return "devices " + labels(infos)
}

// Name returns the program's name.
func (p *BuiltProgram) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// nilProgram is the error of a method called on a nil *BuiltProgram.
func nilProgram(op string) error {
	return fmt.Errorf("%s: %w: nil program", op, ErrInvalidArgument)
}

// Binaries returns the built program for each device of the context.
func (p *BuiltProgram) Binaries() ([][]byte, error) {
	if p == nil {
		return nil, nilProgram("binaries of program")
	}
	if p.released.Load() {
		return nil, fmt.Errorf("binaries of program %q: %w", p.name, ErrClosed)
	}
	b, err := p.drv.Binaries()
	if err != nil {
		return nil, fmt.Errorf("binaries of program %q: %w", p.name, err)
	}
	return b, nil
}

// KernelNames lists the kernels that the program defines.
func (p *BuiltProgram) KernelNames() ([]string, error) {
	if p == nil {
		return nil, nilProgram("kernels of program")
	}
	if p.released.Load() {
		return nil, fmt.Errorf("kernels of program %q: %w", p.name, ErrClosed)
	}
	names, err := p.drv.KernelNames()
	if err != nil {
		return nil, fmt.Errorf("kernels of program %q: %w", p.name, err)
	}
	return names, nil
}

// Release releases the program. Kernels made from it stay usable.
func (p *BuiltProgram) Release() error {
	if p == nil {
		return nilProgram("release program")
	}
	if p.released.Swap(true) {
		return nil
	}
	if err := p.drv.Release(); err != nil {
		return fmt.Errorf("release program %q: %w", p.name, err)
	}
	return nil
}

// Kernel is a kernel of a built program with its argument values. Setting
// arguments changes the Kernel, so one Kernel must not be set up by two
// goroutines at once; Launch captures the arguments, after which they may
// be changed again.
type Kernel struct {
	prog     *BuiltProgram
	drv      driver.Kernel
	name     string
	nargs    int
	released atomic.Bool

	// For kernels of registered specs: slot is the cache's kernel, whose
	// lock Acquire takes and Launch releases; decl is the spec it serves,
	// and hidden holds, per device index, the storage of the device
	// globals bound as hidden arguments.
	slot   *progcache.Kernel[*Kernel]
	decl   *desc.Kernel
	hidden [][]*Mem

	// The prepared launch record (launch.go): every argument's value as
	// last set, which ones changed since the driver last saw them, and
	// for buffer arguments their memory, whose use launches record.
	args       driver.Args
	ids        []uint64 // by argument: a buffer's Mem.id (a driver may reuse a released handle)
	bufs       []*Mem
	pooledArgs int          // buffer arguments that are allocator memory
	foreign    int          // buffer arguments whose driver buffer has no native handle
	setErr     error        // the first error of setting an argument since Acquire
	lim        kernelLimits // local memory and work-group limits (workgroup.go)
}

// Kernel creates the kernel called name. A name that the program does not
// define is an error wrapping ErrNoKernel.
func (p *BuiltProgram) Kernel(name string) (*Kernel, error) {
	if p == nil {
		return nil, nilProgram(fmt.Sprintf("create kernel %q", name))
	}
	if p.released.Load() {
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, ErrClosed)
	}
	if err := p.ctx.enter(); err != nil {
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	defer p.ctx.exit()
	drv, err := p.drv.NewKernel(name)
	if err != nil {
		if errors.Is(err, ErrNoKernel) {
			if names, nerr := p.drv.KernelNames(); nerr == nil {
				err = fmt.Errorf("%w (it defines %v)", err, names)
			}
		}
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	n, err := drv.NumArgs()
	if err != nil {
		drv.Release()
		return nil, fmt.Errorf("create kernel %q of program %q: %w", name, p.name, err)
	}
	k := &Kernel{prog: p, drv: drv, name: name, nargs: n}
	k.args.Slots = make([]driver.Arg, n)
	k.ids = make([]uint64, n)
	k.lim.wg = make([]atomic.Pointer[wgInfo], len(p.ctx.devices))
	return k, nil
}

// Name returns the kernel's name.
func (k *Kernel) Name() string {
	if k == nil {
		return ""
	}
	return k.name
}

// NumArgs returns the number of arguments the kernel takes.
func (k *Kernel) NumArgs() int {
	if k == nil {
		return 0
	}
	return k.nargs
}

// nilKernel is the error of an operation on a nil *Kernel.
func nilKernel(op string) error { return fmt.Errorf("%s: %w: nil kernel", op, ErrInvalidArgument) }

// Release releases the kernel object.
func (k *Kernel) Release() error {
	if k == nil {
		return nilKernel("release kernel")
	}
	if k.released.Swap(true) {
		return nil
	}
	if err := k.drv.Release(); err != nil {
		return fmt.Errorf("release kernel %q: %w", k.name, err)
	}
	return nil
}

func (k *Kernel) checkArg(i int) error {
	if k == nil {
		return nilKernel(fmt.Sprintf("set argument %d", i))
	}
	if k.released.Load() {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, ErrClosed)
	}
	if i < 0 || i >= k.nargs {
		return fmt.Errorf("set argument %d of kernel %q: %w: it takes %d arguments", i, k.name, ErrOutOfRange, k.nargs)
	}
	return nil
}
