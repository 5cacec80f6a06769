package rt

import (
	"fmt"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// builtProgram is a program built for every device of its context: the
// executable form of a device image.
type builtProgram struct {
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

// loadProgram creates a program from binaries, one per device of the
// context in order, as builtProgram.Binaries returned them.
func (c *Context) loadProgram(name string, binaries [][]byte, options string) (*builtProgram, error) {
	if c == nil {
		return nil, fmt.Errorf("load program %q: %w: nil context", name, ErrInvalidArgument)
	}
	if len(binaries) != len(c.devices) {
		return nil, fmt.Errorf("load program %q: %w: %d binaries for %d devices", name, ErrInvalidArgument, len(binaries), len(c.devices))
	}
	return c.build(buildRequest{name: name, binaries: binaries, options: options})
}

// buildDirect makes a program through the backend, bypassing the cache.
func (c *Context) buildDirect(req buildRequest) (*builtProgram, error) {
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
	return &builtProgram{ctx: c, drv: drv, name: req.name}, nil
}

func (c *Context) deviceLabel() string {
	if len(c.devices) == 1 {
		return fmt.Sprintf("device %q", c.devices[0].Name)
	}
	var infos []driver.DeviceInfo
	for _, d := range c.devices {
		infos = append(infos, d.info)
	}
	return "devices " + labels(infos)
}

// Name returns the program's name.
func (p *builtProgram) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// nilProgram is the error of a method called on a nil *builtProgram.
func nilProgram(op string) error {
	return fmt.Errorf("%s: %w: nil program", op, ErrInvalidArgument)
}

// binaries returns the built program for each device of the context.
func (p *builtProgram) binaries() ([][]byte, error) {
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

// kernelNames lists the kernels that the program defines.
func (p *builtProgram) kernelNames() ([]string, error) {
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
func (p *builtProgram) Release() error {
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
