package cuda

/*
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/internal/cmalloc"
	"github.com/dgen-go/dgen/internal/sigsave"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
)

func init() { driver.Register("cuda", Backend{}) }

// Backend is the CUDA implementation of driver.Backend.
type Backend struct{}

var _ driver.AutoDecliner = Backend{}

// CUDA device attributes (CUdevice_attribute).
const (
	attrMaxThreadsPerBlock    = 1
	attrMaxBlockDimX          = 2
	attrMaxGridDimX           = 5
	attrMaxSharedPerBlock     = 8
	attrWarpSize              = 10
	attrMultiprocessorCount   = 16
	attrComputeMajor          = 75
	attrComputeMinor          = 76
	attrMaxSharedOptin        = 97
	attrReservedSharedPerBlok = 111
	// The largest surfaces (CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE*): rt/cuda's
	// images are CUDA arrays for surface loads and stores.
	attrSurface1DWidth        = 55
	attrSurface2DWidth        = 56 // then height
	attrSurface3DWidth        = 58 // then height, depth
	attrSurface1DLayeredWidth = 61 // then layers
	attrSurface2DLayeredWidth = 63 // then height, layers
)

// devInfo is what the backend knows of a CUDA device.
type devInfo struct {
	info                  driver.DeviceInfo
	ord                   C.CUdevice
	maxBlock, maxGrid     [3]int
	surf                  [11]int // the surface attributes from attrSurface1DWidth (55 to 65)
	maxThreads, warp      int
	maxShared, optin      int // bytes of shared memory per block: by default, and opted in
	reserved              int // bytes of shared memory the driver reserves per block
	compiler              *driver.DeviceInfo
	compilerPlatformIndex int
	noCompiler            string // why compiler is nil (compiler.go)
	gate                  *gate  // the gate of the device's primary context (gate.go)
}

// devices lists the CUDA devices once per process.
var devices struct {
	once sync.Once
	list []devInfo
	err  error
}

func listDevices() ([]devInfo, error) {
	devices.once.Do(func() { defer sigsave.Keep()(); devices.list, devices.err = enumerate() })
	return devices.list, devices.err
}

func enumerate() ([]devInfo, error) {
	if err := load(); err != nil {
		return nil, err
	}
	var n C.int
	if err := cuError("cuDeviceGetCount", C.dgen_device_count(&n)); err != nil {
		return nil, err
	}
	var out []devInfo
	for i := range int(n) {
		d, err := deviceInfo(i)
		if err != nil {
			return nil, fmt.Errorf("CUDA device %d: %w", i, err)
		}
		out = append(out, d)
	}
	attachCompilers(out, vendorsDir())
	return out, nil
}

// attachCompilers gives each CUDA device of devs its compiler, NVIDIA's
// OpenCL GPU of the same name, or the reason it has none, reading the ICD
// files of dir only then.
func attachCompilers(devs []devInfo, dir string) {
	gpus, listErr := nvidiaOpenCL()
	var icds []icdFile
	matchCompilers(devs, gpus, func(name string) string {
		if icds == nil {
			icds = readICDs(dir, tryLoad)
		}
		return missingCompiler(name, dir, icds, gpus, listErr)
	})
}

// nvidiaOpenCL lists the GPUs of NVIDIA's OpenCL platforms: the compilers.
func nvidiaOpenCL() ([]driver.DeviceInfo, error) {
	ps, err := opencl.Backend{}.Platforms()
	if err != nil {
		return nil, err
	}
	var out []driver.DeviceInfo
	for _, p := range ps {
		if !strings.Contains(strings.ToUpper(p.Vendor+" "+p.Name), "NVIDIA") {
			continue
		}
		for _, d := range p.Devices {
			if d.Type == driver.DeviceGPU {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

func deviceInfo(i int) (devInfo, error) {
	var (
		d    = devInfo{gate: new(gate)}
		name [256]C.char
		mem  C.size_t
	)
	if err := cuError("cuDeviceGet", C.dgen_device(C.int(i), &d.ord, &name[0], C.int(len(name)), &mem)); err != nil {
		return d, err
	}
	attrs := []struct {
		a   int
		dst *int
	}{
		{attrMaxThreadsPerBlock, &d.maxThreads}, {attrWarpSize, &d.warp}, {attrMaxSharedPerBlock, &d.maxShared},
		{attrMaxSharedOptin, &d.optin}, {attrReservedSharedPerBlok, &d.reserved},
		{attrMaxBlockDimX, &d.maxBlock[0]}, {attrMaxBlockDimX + 1, &d.maxBlock[1]}, {attrMaxBlockDimX + 2, &d.maxBlock[2]},
		{attrMaxGridDimX, &d.maxGrid[0]}, {attrMaxGridDimX + 1, &d.maxGrid[1]}, {attrMaxGridDimX + 2, &d.maxGrid[2]},
	}
	var units, major, minor int
	attrs = append(attrs, struct {
		a   int
		dst *int
	}{attrMultiprocessorCount, &units}, struct {
		a   int
		dst *int
	}{attrComputeMajor, &major}, struct {
		a   int
		dst *int
	}{attrComputeMinor, &minor})
	for i := range d.surf {
		attrs = append(attrs, struct {
			a   int
			dst *int
		}{attrSurface1DWidth + i, &d.surf[i]})
	}
	for _, a := range attrs {
		var v C.int
		if err := cuError("cuDeviceGetAttribute", C.dgen_attr(&v, C.int(a.a), d.ord)); err != nil {
			return d, err
		}
		*a.dst = int(v)
	}
	d.optin = max(d.optin, d.maxShared)
	d.info = driver.DeviceInfo{
		Index:            i,
		Platform:         platformName,
		PlatformVersion:  "CUDA " + versionString(lib.version),
		Name:             C.GoString(&name[0]),
		Vendor:           "NVIDIA Corporation",
		Type:             driver.DeviceGPU,
		Version:          fmt.Sprintf("CUDA %s sm_%d%d", versionString(lib.version), major, minor),
		DriverVersion:    "CUDA " + versionString(lib.version),
		GlobalMemSize:    int64(mem),
		MaxAllocSize:     int64(mem),
		ComputeUnits:     units,
		MaxWorkGroupSize: d.maxThreads,
		LocalMemSize:     int64(d.optin),
		MemBaseAddrAlign: 1, // a view is a pointer offset: no alignment rule
		MaxWorkItemSizes: [3]int64{int64(d.maxBlock[0]), int64(d.maxBlock[1]), int64(d.maxBlock[2])},
		MaxGroups:        [3]int64{int64(d.maxGrid[0]), int64(d.maxGrid[1]), int64(d.maxGrid[2])},
		Images:           d.imageLimits(),
		Handle:           uintptr(i),
	}
	return d, nil
}

// imageLimits returns the largest images the device makes: its largest
// surfaces, the smaller of a single image's and an array's where an array
// has a limit of its own. rt/cuda makes no image over a buffer.
func (d *devInfo) imageLimits() driver.ImageLimits {
	at := func(attr int) int64 { return int64(d.surf[attr-attrSurface1DWidth]) }
	return driver.ImageLimits{
		Width1D:  min(at(attrSurface1DWidth), at(attrSurface1DLayeredWidth)),
		Width2D:  min(at(attrSurface2DWidth), at(attrSurface2DLayeredWidth)),
		Height2D: min(at(attrSurface2DWidth+1), at(attrSurface2DLayeredWidth+1)),
		Width3D:  at(attrSurface3DWidth), Height3D: at(attrSurface3DWidth + 1), Depth3D: at(attrSurface3DWidth + 2),
		Layers: min(at(attrSurface1DLayeredWidth+1), at(attrSurface2DLayeredWidth+2)),
	}
}

// platformName is the name of the backend's one platform. It differs from
// NVIDIA OpenCL's ("NVIDIA CUDA"), so that the persistent cache, whose
// device key holds the platform name, keeps the two backends' programs
// apart, and traces and `dgen cache ls` name the backend.
const platformName = "CUDA driver API"

// Platforms lists one platform, "CUDA driver API", with every CUDA device. Where
// libcuda does not load, the error wraps ErrNoDriver and says why.
func (Backend) Platforms() ([]driver.PlatformInfo, error) {
	ds, err := listDevices()
	if err != nil {
		return nil, err
	}
	p := driver.PlatformInfo{Name: platformName, Vendor: "NVIDIA Corporation", Version: "CUDA " + versionString(lib.version)}
	for _, d := range ds {
		p.Devices = append(p.Devices, d.info)
	}
	return []driver.PlatformInfo{p}, nil
}

// Auto reports whether DGEN_BACKEND=auto should try this backend first:
// libcuda loads, and some CUDA device has NVIDIA's OpenCL to compile for it.
// (Declined says why not, where libcuda loads.)
func (Backend) Auto() bool {
	ds, err := listDevices()
	if err != nil {
		return false
	}
	for _, d := range ds {
		if d.compiler != nil {
			return true
		}
	}
	return false
}

// device is a device of an open context: its primary CUDA context, and the
// events and clock it keeps.
type device struct {
	*devInfo
	ctx        C.CUcontext
	timed      eventPool // events with timing, for profiling queues
	plain      eventPool // events without
	anchor     anchor
	priorities priorityRange // the context's stream priorities (priority.go)
	mem        memPool       // the memory of a one-device context (pool.go)
}

// NewContext retains the primary CUDA context of every device. Each
// device must have NVIDIA's OpenCL, which compiles its programs.
func (Backend) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	defer sigsave.Keep()() // the driver may install signal handlers: keep Go's
	if len(devs) == 0 {
		return nil, errors.New("cuDevicePrimaryCtxRetain: no devices")
	}
	all, err := listDevices()
	if err != nil {
		return nil, err
	}
	c := &context{}
	for _, di := range devs {
		i := int(di.Handle)
		if di.Platform != platformName || i < 0 || i >= len(all) {
			c.Release()
			return nil, fmt.Errorf("cuDevicePrimaryCtxRetain: %s is not a CUDA device", di.Label())
		}
		d := &device{devInfo: &all[i]}
		if err := d.compilerError(); err != nil {
			c.Release()
			return nil, err
		}
		if err := cuError("cuDevicePrimaryCtxRetain", C.dgen_ctx_retain(&d.ctx, d.ord)); err != nil {
			c.Release()
			return nil, err
		}
		d.timed = eventPool{d: d, timed: true}
		d.plain = eventPool{d: d}
		c.devs = append(c.devs, d)
		var least, greatest C.int
		if err := cuError("cuCtxGetStreamPriorityRange", C.dgen_priority_range(d.ctx, &least, &greatest)); err != nil {
			c.Release()
			return nil, err
		}
		d.priorities = priorityRange{least: int(least), greatest: int(greatest)}
		if err := d.anchor.init(d); err != nil {
			c.Release()
			return nil, err
		}
	}
	if len(c.devs) == 1 {
		if err := c.devs[0].mem.init(c.devs[0]); err != nil {
			c.Release()
			return nil, err
		}
	}
	return c, nil
}

// context is a driver context over CUDA devices.
type context struct {
	devs []*device

	mu        sync.Mutex
	compilers map[string]driver.Context // NVIDIA OpenCL contexts, by device name
}

// compiler returns the NVIDIA OpenCL context that compiles for d.
func (c *context) compiler(d *device) (driver.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc, ok := c.compilers[d.info.Name]; ok {
		return cc, nil
	}
	cc, err := opencl.Backend{}.NewContext([]driver.DeviceInfo{*d.compiler})
	if errors.Is(err, driver.ErrDeviceFault) {
		// NVIDIA's OpenCL lost the device to a fault earlier in the
		// process. CUDA's context is not affected (each API's fault is
		// its own), so this is no fault of the context: it can load
		// programs from the persistent cache, and compile nothing.
		return nil, fmt.Errorf("open NVIDIA OpenCL on %q to compile: %v: NVIDIA's OpenCL lost the device to a fault earlier in this process and compiles nothing for it until the process restarts; programs that the persistent cache holds still load: %w",
			d.info.Name, err, ErrNoCompiler)
	}
	if err != nil {
		return nil, fmt.Errorf("open NVIDIA OpenCL on %q to compile: %w", d.info.Name, err)
	}
	if c.compilers == nil {
		c.compilers = make(map[string]driver.Context)
	}
	c.compilers[d.info.Name] = cc
	return cc, nil
}

// device returns the context's device whose handle is h.
func (c *context) device(h uintptr) (int, *device, error) {
	for i, d := range c.devs {
		if uintptr(d.info.Index) == h {
			return i, d, nil
		}
	}
	return 0, nil, fmt.Errorf("device handle %d is not one of the context's", h)
}

// Release releases the compilers, memory pools, events and primary
// contexts, then gives the C heap's free memory back to the system
// (cmalloc.Trim): what the driver freed.
func (c *context) Release() error {
	var errs []error
	c.mu.Lock()
	for _, cc := range c.compilers {
		errs = append(errs, cc.Release())
	}
	c.compilers = nil
	c.mu.Unlock()
	for _, d := range c.devs {
		errs = append(errs, d.mem.release(d))
		d.anchor.release()
		d.timed.drain()
		d.plain.drain()
		errs = append(errs, cuError("cuDevicePrimaryCtxRelease", C.dgen_ctx_release(d.ord)))
	}
	c.devs = nil
	cmalloc.Trim()
	return errors.Join(errs...)
}

// processStart is the origin of the device clocks the backend reports.
var processStart = time.Now()

var _ = unsafe.Pointer(nil)
