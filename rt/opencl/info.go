package opencl

/*
#include <CL/cl.h>
*/
import "C"

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/dgen-go/dgen/internal/sigsave"
	"github.com/dgen-go/dgen/rt/driver"
)

// loadOnce makes the first OpenCL call, which loads the drivers.
var loadOnce sync.Once

// load makes the first OpenCL calls, which load the drivers and make them
// initialize their devices, with the environment that PoCL needs to read
// then (see isolatePoCL), keeping Go's signal handlers (PoCL's LLVM
// installs its own as it loads).
func load() {
	restore := isolatePoCL()
	defer restore()
	defer sigsave.Keep()()
	var n C.cl_uint
	if C.clGetPlatformIDs(0, nil, &n) != C.CL_SUCCESS || n == 0 {
		return
	}
	ids := make([]C.cl_platform_id, n)
	if C.clGetPlatformIDs(n, &ids[0], nil) != C.CL_SUCCESS {
		return
	}
	for _, p := range ids {
		var m C.cl_uint
		C.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, 0, nil, &m)
	}
}

func platformIDs() ([]C.cl_platform_id, error) {
	loadOnce.Do(load)
	var n C.cl_uint
	code := C.clGetPlatformIDs(0, nil, &n)
	if code == -1001 || n == 0 { // CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no platform
		return nil, nil
	}
	if err := check("clGetPlatformIDs", code); err != nil {
		return nil, err
	}
	ids := make([]C.cl_platform_id, n)
	if err := check("clGetPlatformIDs", C.clGetPlatformIDs(n, &ids[0], nil)); err != nil {
		return nil, err
	}
	return ids, nil
}

func deviceIDs(p C.cl_platform_id) ([]C.cl_device_id, error) {
	var n C.cl_uint
	code := C.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, 0, nil, &n)
	if code == C.CL_DEVICE_NOT_FOUND || n == 0 {
		return nil, nil
	}
	if err := check("clGetDeviceIDs", code); err != nil {
		return nil, err
	}
	ids := make([]C.cl_device_id, n)
	if err := check("clGetDeviceIDs", C.clGetDeviceIDs(p, C.CL_DEVICE_TYPE_ALL, n, &ids[0], nil)); err != nil {
		return nil, err
	}
	return ids, nil
}

func platformString(p C.cl_platform_id, param C.cl_platform_info) (string, error) {
	var size C.size_t
	if err := check("clGetPlatformInfo", C.clGetPlatformInfo(p, param, 0, nil, &size)); err != nil {
		return "", err
	}
	if size == 0 {
		return "", nil
	}
	buf := make([]byte, size)
	if err := check("clGetPlatformInfo", C.clGetPlatformInfo(p, param, size, unsafe.Pointer(&buf[0]), nil)); err != nil {
		return "", err
	}
	return cString(buf), nil
}

func deviceString(d C.cl_device_id, param C.cl_device_info) (string, error) {
	var size C.size_t
	if err := check("clGetDeviceInfo", C.clGetDeviceInfo(d, param, 0, nil, &size)); err != nil {
		return "", err
	}
	if size == 0 {
		return "", nil
	}
	buf := make([]byte, size)
	if err := check("clGetDeviceInfo", C.clGetDeviceInfo(d, param, size, unsafe.Pointer(&buf[0]), nil)); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// deviceValue reads a fixed-size device property into v.
func deviceValue[T any](d C.cl_device_id, param C.cl_device_info, v *T) error {
	return check("clGetDeviceInfo", C.clGetDeviceInfo(d, param, C.size_t(unsafe.Sizeof(*v)), unsafe.Pointer(v), nil))
}

func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

func platformInfo(index int, p C.cl_platform_id) (driver.PlatformInfo, error) {
	info := driver.PlatformInfo{Index: index}
	var err error
	if info.Name, err = platformString(p, C.CL_PLATFORM_NAME); err != nil {
		return info, err
	}
	if info.Vendor, err = platformString(p, C.CL_PLATFORM_VENDOR); err != nil {
		return info, err
	}
	if info.Version, err = platformString(p, C.CL_PLATFORM_VERSION); err != nil {
		return info, err
	}
	devs, err := deviceIDs(p)
	if err != nil {
		return info, err
	}
	for i, d := range devs {
		di, err := deviceInfo(d)
		if err != nil {
			return info, err
		}
		di.PlatformIndex, di.Index = index, i
		di.Platform, di.PlatformVersion = info.Name, info.Version
		setLimits(&di, info.Name)
		info.Devices = append(info.Devices, di)
	}
	return info, nil
}

func deviceInfo(d C.cl_device_id) (driver.DeviceInfo, error) {
	info := driver.DeviceInfo{Handle: uintptr(unsafe.Pointer(d))}
	strs := []struct {
		param C.cl_device_info
		dst   *string
	}{
		{C.CL_DEVICE_NAME, &info.Name},
		{C.CL_DEVICE_VENDOR, &info.Vendor},
		{C.CL_DEVICE_VERSION, &info.Version},
		{C.CL_DRIVER_VERSION, &info.DriverVersion},
		{C.CL_DEVICE_OPENCL_C_VERSION, &info.OpenCLCVersion},
	}
	for _, s := range strs {
		v, err := deviceString(d, s.param)
		if err != nil {
			return info, err
		}
		*s.dst = v
	}
	ext, err := deviceString(d, C.CL_DEVICE_EXTENSIONS)
	if err != nil {
		return info, err
	}
	info.Extensions = strings.Fields(ext)
	var (
		typ          C.cl_device_type
		gmem, maxa   C.cl_ulong
		lmem         C.cl_ulong
		units, align C.cl_uint
		maxWorkGroup C.size_t
	)
	if err := deviceValue(d, C.CL_DEVICE_TYPE, &typ); err != nil {
		return info, err
	}
	switch {
	case typ&C.CL_DEVICE_TYPE_GPU != 0:
		info.Type = driver.DeviceGPU
	case typ&C.CL_DEVICE_TYPE_CPU != 0:
		info.Type = driver.DeviceCPU
	case typ&C.CL_DEVICE_TYPE_ACCELERATOR != 0:
		info.Type = driver.DeviceAccelerator
	}
	if err := deviceValue(d, C.CL_DEVICE_GLOBAL_MEM_SIZE, &gmem); err != nil {
		return info, err
	}
	if err := deviceValue(d, C.CL_DEVICE_MAX_MEM_ALLOC_SIZE, &maxa); err != nil {
		return info, err
	}
	if err := deviceValue(d, C.CL_DEVICE_MAX_COMPUTE_UNITS, &units); err != nil {
		return info, err
	}
	if err := deviceValue(d, C.CL_DEVICE_MAX_WORK_GROUP_SIZE, &maxWorkGroup); err != nil {
		return info, err
	}
	if err := deviceValue(d, C.CL_DEVICE_LOCAL_MEM_SIZE, &lmem); err != nil {
		return info, err
	}
	if err := deviceValue(d, C.CL_DEVICE_MEM_BASE_ADDR_ALIGN, &align); err != nil {
		return info, err
	}
	info.GlobalMemSize, info.MaxAllocSize, info.LocalMemSize = int64(gmem), int64(maxa), int64(lmem)
	info.MemBaseAddrAlign = int64(align) / 8
	info.ComputeUnits, info.MaxWorkGroupSize = int(units), int(maxWorkGroup)
	var dims C.cl_uint
	if err := deviceValue(d, C.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, &dims); err != nil {
		return info, err
	}
	items := make([]C.size_t, max(dims, 3))
	if err := check("clGetDeviceInfo", C.clGetDeviceInfo(d, C.CL_DEVICE_MAX_WORK_ITEM_SIZES, C.size_t(len(items))*C.size_t(unsafe.Sizeof(items[0])), unsafe.Pointer(&items[0]), nil)); err != nil {
		return info, err
	}
	for i := range info.MaxWorkItemSizes {
		info.MaxWorkItemSizes[i] = int64(items[i])
	}
	return info, imageLimits(d, &info.Images)
}

// imageLimits reads the device's largest images; zeros where it has none.
func imageLimits(d C.cl_device_id, lim *driver.ImageLimits) error {
	var support C.cl_bool
	if err := deviceValue(d, C.CL_DEVICE_IMAGE_SUPPORT, &support); err != nil || support == C.CL_FALSE {
		return err
	}
	for _, v := range []struct {
		param C.cl_device_info
		dst   *int64
	}{
		{C.CL_DEVICE_IMAGE2D_MAX_WIDTH, &lim.Width2D}, {C.CL_DEVICE_IMAGE2D_MAX_HEIGHT, &lim.Height2D},
		{C.CL_DEVICE_IMAGE3D_MAX_WIDTH, &lim.Width3D}, {C.CL_DEVICE_IMAGE3D_MAX_HEIGHT, &lim.Height3D},
		{C.CL_DEVICE_IMAGE3D_MAX_DEPTH, &lim.Depth3D},
		{C.CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, &lim.Layers}, {C.CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, &lim.Buffer},
	} {
		var n C.size_t
		if err := deviceValue(d, v.param, &n); err != nil {
			return err
		}
		*v.dst = int64(n)
	}
	lim.Width1D = lim.Width2D // OpenCL 1.2: a 1-D image is as wide as a 2-D one may be
	return nil
}

// poclPlatform is the name of PoCL's platform.
const poclPlatform = "Portable Computing Language"

// poclMaxGroups is the most work-groups that PoCL 3's CPU scheduler runs in
// one launch: it numbers them, and the work-groups of a row and of a
// slice, with 32-bit unsigned integers, and a launch beyond that aborts the
// process (pthread_scheduler.c's get_wg_index_range: "max_wgs > 0") or
// divides by zero (SIGFPE).
const poclMaxGroups = 1<<32 - 1

// setLimits records what the platform named platform lets one launch do
// on the device, beyond what OpenCL reports: PoCL's scheduler limits.
func setLimits(info *driver.DeviceInfo, platform string) {
	if platform == poclPlatform {
		info.MaxGroups = [3]int64{poclMaxGroups, poclMaxGroups, poclMaxGroups}
		info.MaxGroupsTotal = poclMaxGroups
	}
}

// CompileWorkGroupSize implements driver.KernelDescriber.
func (k kernel) CompileWorkGroupSize(device uintptr) ([3]int, error) {
	d := *(*C.cl_device_id)(unsafe.Pointer(&device))
	var wg [3]C.size_t
	if err := kernelValue(k, d, C.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, &wg); err != nil {
		return [3]int{}, err
	}
	return [3]int{int(wg[0]), int(wg[1]), int(wg[2])}, nil
}

// Attributes implements driver.KernelDescriber.
func (k kernel) Attributes() (string, error) {
	var size C.size_t
	if err := check("clGetKernelInfo", C.clGetKernelInfo(k.h, C.CL_KERNEL_ATTRIBUTES, 0, nil, &size)); err != nil {
		return "", err
	}
	if size <= 1 {
		return "", nil
	}
	buf := make([]byte, size)
	if err := check("clGetKernelInfo", C.clGetKernelInfo(k.h, C.CL_KERNEL_ATTRIBUTES, size, unsafe.Pointer(&buf[0]), nil)); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// ArgInfo implements driver.KernelDescriber through clGetKernelArgInfo.
func (k kernel) ArgInfo(i int) (driver.ArgInfo, error) {
	var (
		info   driver.ArgInfo
		addr   C.cl_kernel_arg_address_qualifier
		access C.cl_kernel_arg_access_qualifier
		tq     C.cl_kernel_arg_type_qualifier
		err    error
	)
	if err = argValue(k, i, C.CL_KERNEL_ARG_ADDRESS_QUALIFIER, &addr); err == nil {
		err = argValue(k, i, C.CL_KERNEL_ARG_ACCESS_QUALIFIER, &access)
	}
	if err == nil {
		err = argValue(k, i, C.CL_KERNEL_ARG_TYPE_QUALIFIER, &tq)
	}
	if err == nil {
		info.Name, err = argString(k, i, C.CL_KERNEL_ARG_NAME)
	}
	if err == nil {
		info.TypeName, err = argString(k, i, C.CL_KERNEL_ARG_TYPE_NAME)
	}
	if err != nil {
		return driver.ArgInfo{}, err
	}
	switch addr {
	case C.CL_KERNEL_ARG_ADDRESS_GLOBAL:
		info.Address = driver.AddressGlobal
	case C.CL_KERNEL_ARG_ADDRESS_CONSTANT:
		info.Address = driver.AddressConstant
	case C.CL_KERNEL_ARG_ADDRESS_LOCAL:
		info.Address = driver.AddressLocal
	}
	switch access {
	case C.CL_KERNEL_ARG_ACCESS_READ_ONLY:
		info.Access = driver.AccessReadOnly
	case C.CL_KERNEL_ARG_ACCESS_WRITE_ONLY:
		info.Access = driver.AccessWriteOnly
	case C.CL_KERNEL_ARG_ACCESS_READ_WRITE:
		info.Access = driver.AccessReadWrite
	}
	for _, q := range []struct {
		cl  C.cl_kernel_arg_type_qualifier
		bit driver.TypeQualifier
	}{{C.CL_KERNEL_ARG_TYPE_CONST, driver.TypeConst}, {C.CL_KERNEL_ARG_TYPE_RESTRICT, driver.TypeRestrict}, {C.CL_KERNEL_ARG_TYPE_VOLATILE, driver.TypeVolatile}} {
		if tq&q.cl != 0 {
			info.Qualifiers |= q.bit
		}
	}
	return info, nil
}

// argValue reads a fixed-size property of argument i of k into v.
func argValue[T any](k kernel, i int, param C.cl_kernel_arg_info, v *T) error {
	return argError(C.clGetKernelArgInfo(k.h, C.cl_uint(i), param, C.size_t(unsafe.Sizeof(*v)), unsafe.Pointer(v), nil))
}

// argString reads a string property of argument i of k.
func argString(k kernel, i int, param C.cl_kernel_arg_info) (string, error) {
	var size C.size_t
	if err := argError(C.clGetKernelArgInfo(k.h, C.cl_uint(i), param, 0, nil, &size)); err != nil {
		return "", err
	}
	if size <= 1 {
		return "", nil
	}
	buf := make([]byte, size)
	if err := argError(C.clGetKernelArgInfo(k.h, C.cl_uint(i), param, size, unsafe.Pointer(&buf[0]), nil)); err != nil {
		return "", err
	}
	return cString(buf), nil
}

// argError is check for clGetKernelArgInfo, whose
// CL_KERNEL_ARG_INFO_NOT_AVAILABLE means driver.ErrNoArgInfo.
func argError(code C.cl_int) error {
	if code == C.CL_KERNEL_ARG_INFO_NOT_AVAILABLE {
		e := newError("clGetKernelArgInfo", int32(code), "")
		e.Kind = driver.ErrNoArgInfo
		return e
	}
	return check("clGetKernelArgInfo", code)
}

var _ driver.KernelDescriber = kernel{}
