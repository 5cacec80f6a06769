package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// Sampler says how a kernel's read_imagef (and friends) reads an image:
// with coordinates normalized to [0, 1] or in pixels, what it returns
// outside the image, and how it filters. It is a value: a kernel spec's
// sampler_t field takes one, and the context makes the driver's sampler
// object on first use and keeps it until Close. A sampler declared as a
// constant in the kernel source needs no field at all.
type Sampler struct {
	// Normalized says that coordinates run from 0 to 1 across the image,
	// rather than in pixels.
	Normalized bool
	// Address is what the sampler returns outside the image: ClampToEdge
	// (the zero AddressMode), Clamp, AddressNone, Repeat or MirroredRepeat
	// (the last two need Normalized).
	Address AddressMode
	// Filter is Nearest (the zero FilterMode) or Linear.
	Filter FilterMode
}

// desc checks s and returns its driver description.
func (s Sampler) desc() (driver.SamplerDesc, error) {
	d := driver.SamplerDesc{Normalized: s.Normalized, Address: s.Address.String(), Filter: s.Filter.String()}
	if _, err := addressNames.parse("address mode", d.Address); err != nil {
		return d, fmt.Errorf("sampler: %w", err)
	}
	if _, err := filterNames.parse("filter", d.Filter); err != nil {
		return d, fmt.Errorf("sampler: %w", err)
	}
	if (s.Address == Repeat || s.Address == MirroredRepeat) && !s.Normalized {
		return d, fmt.Errorf("sampler: %w: address mode %s needs normalized coordinates", ErrInvalidArgument, d.Address)
	}
	return d, nil
}

// samplerObject is a driver sampler of a context. released is set, under
// the context's images.mu, when the driver object is released (by Close),
// after which a graph that recorded it refuses to launch.
type samplerObject struct {
	drv      driver.Sampler
	released atomic.Bool
}

// check returns the error of a use of s after its release.
func (s *samplerObject) check() error {
	if s.released.Load() {
		return fmt.Errorf("sampler: %w: its driver object was released", ErrInvalidArgument)
	}
	return nil
}

// releaseSamplers releases the driver samplers ss, which Close took
// from the context, marking each released.
func releaseSamplers(ss map[Sampler]*samplerObject) []error {
	var errs []error
	for _, s := range ss {
		s.released.Store(true)
		if err := s.drv.Release(); err != nil {
			errs = append(errs, fmt.Errorf("sampler: %w", err))
		}
	}
	return errs
}

// sampler returns the context's driver sampler for s, made on first use
// with no lock held: goroutines that race to make the same one each make
// one, and all but the first to take images.mu release theirs.
func (c *Context) sampler(s Sampler) (*samplerObject, error) {
	d, err := s.desc()
	if err != nil {
		return nil, err
	}
	c.images.mu.Lock()
	ds, ok := c.images.samplers[s]
	c.images.mu.Unlock()
	if ok {
		return ds, nil
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("sampler: %w", ErrClosed)
	}
	ic, err := c.imageContext("sampler")
	if err != nil {
		return nil, err
	}
	drv, err := ic.NewSampler(d)
	if err != nil {
		return nil, fmt.Errorf("create sampler on %s: %w", c.deviceLabel(), err)
	}
	c.images.mu.Lock()
	ds, ok = c.images.samplers[s]
	closed := c.closed.Load() // Close takes the samplers under mu after it set closed
	if !ok && !closed {
		if c.images.samplers == nil {
			c.images.samplers = map[Sampler]*samplerObject{}
		}
		ds = &samplerObject{drv: drv}
		c.images.samplers[s] = ds
	}
	c.images.mu.Unlock()
	switch {
	case !ok && !closed:
		return ds, nil
	case ok:
		drv.Release()
		return ds, nil
	}
	drv.Release()
	return nil, fmt.Errorf("sampler: %w", ErrClosed)
}

// SetSampler is rt/raw's Kernel.SetSampler: it sets argument i, a
// sampler_t, to s.
func (k *RawKernel) SetSampler(i int, s Sampler) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if err := k.setSampler(i, s); err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	return nil
}

// setSampler records argument i as the context's driver sampler for s in
// the launch record: an ArgSampler slot holding its native handle, or,
// for a backend whose samplers have none, a slot that flush sets through
// driver.SamplerKernel.
func (k *kernelObject) setSampler(i int, s Sampler) error {
	ds, err := k.prog.ctx.sampler(s)
	if err != nil {
		return err
	}
	if _, ok := k.drv.(driver.SamplerKernel); !ok {
		return fmt.Errorf("%w: the backend's kernels take no samplers", errors.ErrUnsupported)
	}
	if k.samplers == nil {
		k.samplers = make([]*samplerObject, k.nargs)
	}
	slot := &k.args.Slots[i]
	if slot.Kind != driver.ArgSampler || k.samplers[i] != ds {
		var h uint64
		if ns, ok := ds.drv.(driver.NativeSampler); ok {
			h = ns.Handle()
		} else {
			k.foreign = 1 // launched through flush, which sets it by SetArgSampler
		}
		*slot = driver.Arg{Kind: driver.ArgSampler, Size: uint32(unsafe.Sizeof(uintptr(0))), Bits: h, Changed: slot.Changed}
		k.samplers[i] = ds
		k.mark(i)
	}
	k.bind(i, nil)
	return nil
}

// setArgSampler sets argument i, recorded by setSampler, through the
// driver's kernel.
func (k *kernelObject) setArgSampler(i int) error {
	sk, ok := k.drv.(driver.SamplerKernel)
	if !ok {
		return fmt.Errorf("%w: the backend's kernels take no samplers", errors.ErrUnsupported)
	}
	return sk.SetArgSampler(i, k.samplers[i].drv)
}

// SpecImage and SpecSampler are the image launch path of generated code:
// an error is kept for Submit or Launch to return. kind is the OpenCL C
// type of the parameter, which the image must be.
func (k *Kernel) SpecImage(i int, img Image, kind, access string) {
	if err := k.setImage(i, img, kind, access); err != nil && k.setErr == nil {
		k.setErr = fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
}

func (k *Kernel) SpecSampler(i int, s Sampler) {
	if err := k.setSampler(i, s); err != nil && k.setErr == nil {
		k.setErr = fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
}

// SetImage is rt/raw's Kernel.SetImage: it sets argument i, an image
// parameter with the OpenCL C access qualifier access, to img, of any
// kind.
func (k *RawKernel) SetImage(i int, img Image, access string) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if err := k.setImage(i, img, "", access); err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	return nil
}

// setImage records img as argument i; kind, when not empty, is the
// parameter's OpenCL C image type, which img must be.
func (k *kernelObject) setImage(i int, img Image, kind, access string) error {
	h := img.h
	if h == nil {
		return fmt.Errorf("%w: zero image", ErrInvalidArgument)
	}
	m := h.mem()
	_, err := m.driverBuffer()
	if err != nil {
		return fmt.Errorf("image: %w", unwrapBuffer(err))
	}
	if err := k.prog.ctx.sameContext("the image", m.ctx); err != nil {
		return err
	}
	if kind != "" && kind != h.desc.Kind.String() {
		return fmt.Errorf("%w: an %s image passed to an %s parameter", ErrInvalidArgument, h.desc.Kind, kind)
	}
	var want Access
	if err := want.UnmarshalText([]byte(access)); err != nil || access == "" {
		return fmt.Errorf("%w: access qualifier %q: want read_only, write_only or read_write", ErrInvalidArgument, access)
	}
	if h.desc.Access != ReadWrite && h.desc.Access != want {
		return fmt.Errorf("%w: a %s image passed to a %s parameter", ErrInvalidArgument, h.desc.Access, access)
	}
	if want == ReadWrite {
		if err := k.prog.ctx.readWriteImages(); err != nil {
			return err
		}
	}
	k.recordBuffer(i, m)
	return nil
}

// readWriteImages reports, as an error wrapping errors.ErrUnsupported,
// a device of the context that is an OpenCL 1.x device, which has no
// read_write images. (An OpenCL 3.0 device may lack them too: its compiler
// then refuses the program, whose image dgen guards with
// __opencl_c_read_write_images.)
func (c *Context) readWriteImages() error {
	for _, d := range c.devices {
		if v := clVersion(d.Version); v != 0 && v < 200 {
			return fmt.Errorf("%w: a read_write image parameter needs an OpenCL 2.0 device or later, but %s is %q",
				errors.ErrUnsupported, d, d.Version)
		}
	}
	return nil
}

// clVersion returns 120 for "OpenCL 1.2 ...", 0 when unknown.
func clVersion(s string) int {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0
	}
	maj, min, ok := strings.Cut(f[1], ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil {
		return 0
	}
	return a*100 + b*10
}
