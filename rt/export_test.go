package rt

import "github.com/dgen-go/dgen/rt/driver"

// Test-only names for the program and kernel cache, which rt's external
// tests (package rt_test) drive directly.

type (
	ProgramImage = programImage
	KernelSpec   = kernelKey
	CachedKernel = cachedKernel
)

func NewKernelSpec(img *ProgramImage, name string) *KernelSpec { return newKernelKey(img, name) }

func (c *Context) ProgramFor(img *ProgramImage) (*BuiltProgram, error) { return c.programFor(img) }

func (c *Context) KernelFor(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	return c.kernelFor(spec, q)
}

func (c *Context) AcquireKernel(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	return c.acquireKernel(spec, q)
}

func (ck *cachedKernel) Lock() (*Kernel, error) { return ck.lock() }
func (ck *cachedKernel) Unlock()                { ck.unlock() }
func (ck *cachedKernel) Kernel() *Kernel        { return ck.k }

func (s *kernelKey) Name() string { return s.name }

func (q *Queue) LaunchSkip(skip int, k *Kernel, r Range, wait ...*Event) (*Event, error) {
	return q.launch(k, r, wait, skip)
}

func (q *Queue) SubmitSkip(skip int, k *Kernel, r Range, wait ...*Event) error {
	return q.submit(k, r, wait, skip)
}

func (m *Mem) Driver() (driver.Buffer, error) { return m.driverBuffer() }
