package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// builtProgram is a program built for every device of its context: the
// executable form of a device image.
type builtProgram struct {
	ctx      *Context
	drv      driver.Program
	name     string
	direct   bool // loaded for rt/raw outside the cache: live in the context until released (live.go)
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
		return nil, fmt.Errorf("build program %q: %w", req.name, err)
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
		return nil, c.failed(nil, fmt.Errorf("%s program %q for %s: %w", op, req.name, c.deviceLabel(), err))
	}
	if req.binaries == nil && t0 != 0 {
		c.traceCache(0, trace.Cache{Op: trace.Build, Program: req.name, Duration: c.tracing.tr.Now() - t0})
	}
	return &builtProgram{ctx: c, drv: drv, name: req.name}, nil
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

// Binaries returns the built program for each device of the context.
func (p *builtProgram) Binaries() ([][]byte, error) {
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
func (p *builtProgram) KernelNames() ([]string, error) {
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

// Release is rt/raw's Program.Release, which documents it.
func (p *builtProgram) Release() error {
	if p == nil {
		return nilProgram("release program")
	}
	var err error
	if p.direct {
		err = p.ctx.ownerRelease(p)
	} else {
		err = p.releaseLive()
	}
	if err != nil {
		return fmt.Errorf("release program %q: %w", p.name, err)
	}
	return nil
}

// releaseLive and describe make a program loaded from binaries, which no
// cache holds, a liveObject (live.go): it is live under its *builtProgram
// until released.
func (p *builtProgram) releaseLive() error {
	if p.released.Swap(true) {
		return nil
	}
	return p.drv.Release()
}

func (p *builtProgram) describe() string { return fmt.Sprintf("program %q", p.name) }

// buildContext is build bounded by ctx: a program from source waits for
// the program cache (another goroutine's or process's build) only until
// ctx is done, and returns an error wrapping ctx.Err() then, while the
// build goes on for the others who wait for it.
func (c *Context) buildContext(ctx context.Context, req buildRequest) (*builtProgram, error) {
	if req.binaries != nil {
		p, err := c.buildDirect(req)
		if err != nil {
			return nil, err
		}
		if err := c.enter(); err != nil {
			p.Release()
			return nil, fmt.Errorf("load program %q: %w", req.name, err)
		}
		defer c.exit()
		p.direct = true
		c.live.add(p) // no cache holds it
		return p, nil
	}
	return c.programForContext(ctx, &progcache.Image{ID: req.name, Name: req.name, Source: req.source, Options: req.options})
}

// programForContext is programFor bounded by ctx, as buildContext is.
func (c *Context) programForContext(ctx context.Context, img *progcache.Image) (*builtProgram, error) {
	return c.programWithContext(ctx, img, nil)
}

// programWithContext is programForContext for the variant with the values
// over in place of the context's (progcache's ProgramWithContext).
func (c *Context) programWithContext(ctx context.Context, img *progcache.Image, over []progcache.SpecValue) (*builtProgram, error) {
	if c == nil {
		return nil, c.enter() // the error of a nil context
	}
	p, name, err := c.cache.pc.ProgramWithContext(ctx, img, over)
	if err != nil {
		return nil, err
	}
	return &builtProgram{ctx: c, drv: p, name: name}, nil
}

// Build builds the program for every device of c, with its device globals
// and c's values of its specialization constants, with values in their
// place, as the first launch of one of its kernel specs with those values
// would, and keeps it in c's program cache. That first launch may wait for
// a compile, for another process's build of the same program (up to the
// persistent cache's build wait) and for the cache's remote tier: Build
// moves that wait out of it and bounds it by ctx, as a generated
// EnqueueContext bounds it in the launch. When ctx is done first, Build
// returns an error wrapping ctx.Err(); the build goes on for whoever else
// waits for it. With the in-memory cache off (Config.Cache), a launch
// builds again, from the persistent cache.
//
// values are the variant's own values (SpecConst.Of), as a launch gives
// them in its spec's fields or a queue from Queue.WithSpec gives them: a
// service builds the variants it will serve before it takes its first
// request, and their first launches build nothing. A value of a constant
// that the program does not use, a zero Spec, or two values of one
// constant are errors wrapping ErrInvalidArgument, a value outside its
// constant's bounds one wrapping ErrOutOfRange, and nothing is built.
func (p *Program) Build(ctx context.Context, c *Context, values ...SpecValue) error {
	bp, err := p.buildContext(ctx, c, values)
	if err != nil {
		return err
	}
	return bp.Release()
}

// buildContext is build bounded by ctx, for the variant of values.
func (p *Program) buildContext(ctx context.Context, c *Context, values []SpecValue) (*builtProgram, error) {
	d, err := p.registration()
	if err != nil {
		return nil, err
	}
	consts, over, err := specValuesOf(values)
	if err != nil {
		return nil, fmt.Errorf("build program %s: %w", d.ID, err)
	}
	for _, sc := range consts {
		if !slices.Contains(d.SpecConsts, sc) {
			return nil, fmt.Errorf("build program %s: %w: its image does not use specialization constant %s (%s)", d.ID, ErrInvalidArgument, sc.Name, sc.ID)
		}
	}
	img, err := d.Built()
	if err != nil {
		return nil, err
	}
	return c.programWithContext(ctx, img, over)
}

// BuildVariant builds, as Program.Build does, the variant for values of
// every registered program that uses at least one of their constants:
// every program whose launches the values may reach. It returns the
// programs' errors, joined; the programs that built are kept in c's
// program cache all the same.
func BuildVariant(ctx context.Context, c *Context, values ...SpecValue) error {
	consts, over, err := specValuesOf(values)
	if err == nil && len(consts) == 0 {
		err = fmt.Errorf("%w: no values", ErrInvalidArgument)
	}
	if err != nil {
		return fmt.Errorf("build variant: %w", err)
	}
	var progs []*desc.Program
	for _, sc := range consts {
		for _, p := range desc.ProgramsUsing(sc) {
			if !slices.Contains(progs, p) {
				progs = append(progs, p)
			}
		}
	}
	var errs []error
	for _, d := range progs {
		img, err := d.Built()
		if err == nil {
			var bp *builtProgram
			if bp, err = c.programWithContext(ctx, img, over); err == nil {
				err = bp.Release()
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("build variant of program %s: %w", d.ID, err))
		}
	}
	return errors.Join(errs...)
}

// build is the one function through which every program is made: a
// program built from source goes through the cache, keyed by the hash of
// its source with its name as the image id; one loaded from binaries the
// caller gave is made directly.
func (c *Context) build(req buildRequest) (*builtProgram, error) {
	return c.buildContext(context.Background(), req)
}

// programFor returns img built for every device of the context through
// the cache. The caller may Release the program it gets; the cache keeps
// its own reference. A compile error wraps ErrBuildFailed and carries the
// build log.
func (c *Context) programFor(img *progcache.Image) (*builtProgram, error) {
	return c.programForContext(context.Background(), img)
}
