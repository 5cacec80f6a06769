package rt

import (
	"fmt"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// Test-only names for the program and kernel cache (package
// rt/internal/progcache), which rt's external tests (package rt_test)
// drive through a context on a real device.

type (
	ProgramImage   = progcache.Image
	KernelSpec     = progcache.KernelKey
	CachedKernel   = progcache.Kernel[*Kernel]
	CacheSpecValue = progcache.SpecValue
)

func NewKernelSpec(img *ProgramImage, name string) *KernelSpec {
	return progcache.NewKernelKey(img, name)
}

func (c *Context) ProgramFor(img *ProgramImage) (*BuiltProgram, error) { return c.programFor(img) }

func (c *Context) KernelFor(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	ck, err := c.pc.Kernel(spec, c.devIndex(q))
	if err != nil {
		return nil, c.foreignQueue(spec, q, err)
	}
	return ck, nil
}

func (c *Context) AcquireKernel(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	ck, err := c.pc.Acquire(spec, c.devIndex(q))
	if err != nil {
		return nil, c.foreignQueue(spec, q, err)
	}
	return ck, nil
}

// foreignQueue returns err, or for a queue of another context an error
// that names both contexts' devices.
func (c *Context) foreignQueue(spec *KernelSpec, q *Queue, err error) error {
	if q == nil || spec == nil || q.ctx == c {
		return err
	}
	return fmt.Errorf("get kernel %q: %w", spec.Name(), c.sameContext("the queue", q.ctx))
}

func (q *Queue) LaunchSkip(skip int, k *Kernel, r Range, wait ...*Event) (*Event, error) {
	return q.launch(k, r, wait, skip)
}

func (q *Queue) SubmitSkip(skip int, k *Kernel, r Range, wait ...*Event) error {
	return q.submit(k, r, wait, skip)
}

// UnlockAcquired unlocks a kernel that a registered kernel's Acquire
// returned, as its Launch does last.
func UnlockAcquired(k *Kernel) { k.slot.Unlock() }

func (m *Mem) Driver() (driver.Buffer, error) { return m.driverBuffer() }
