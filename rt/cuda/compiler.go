package cuda

/*
#include <dlfcn.h>
#include <stdlib.h>

// dgen_try_open reports whether lib loads: NULL, or dlerror's message.
static const char *dgen_try_open(const char *lib) {
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return dlerror();
	dlclose(h);
	return NULL;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/dgen-go/dgen/internal/sigsave"
	"github.com/dgen-go/dgen/rt/driver"
)

// The compiler of a CUDA device is NVIDIA's OpenCL on the same GPU, found
// through the OpenCL ICD loader, which reads the .icd files of a vendors
// directory (/etc/OpenCL/vendors, or OCL_ICD_VENDORS), each naming a
// library to load. NVIDIA's driver installs libnvidia-opencl.so.1, but a
// container may lack the ICD file that names it (the GPU machine does), or
// the library itself. Where a CUDA device has no compiler, the backend
// says which of these parts is missing: NewContext fails with
// ErrNoCompiler, and Auto reports false, so that DGEN_BACKEND=auto runs
// OpenCL, whose devices then exclude the GPU (see Declined).

// ErrNoCompiler reports a CUDA device that NVIDIA's OpenCL, which
// compiles the backend's programs, does not list: its ICD file or its
// library is missing. It wraps ErrNoDriver.
var ErrNoCompiler = fmt.Errorf("%w: no NVIDIA OpenCL to compile for the device", ErrNoDriver)

// nvidiaICD is the ICD file and library that register NVIDIA's OpenCL.
const (
	nvidiaICD = "nvidia.icd"
	nvidiaLib = "libnvidia-opencl.so.1"
)

// icdFile is one .icd file of the vendors directory: the library it
// names and, for one that names NVIDIA's, why that does not load.
type icdFile struct {
	path, lib string
	loadErr   error
}

// nvidia reports whether the file registers NVIDIA's OpenCL.
func (f icdFile) nvidia() bool {
	return strings.Contains(strings.ToLower(filepath.Base(f.path)+" "+f.lib), "nvidia")
}

// vendorsDir returns where the ICD loader reads .icd files:
// OCL_ICD_VENDORS (a directory, or one file), which the loader reads from
// the process environment and rt passes on (driver.LibraryEnv), or
// /etc/OpenCL/vendors.
func vendorsDir() string {
	if v := driver.LibraryEnv("OCL_ICD_VENDORS"); v != "" {
		return v
	}
	return "/etc/OpenCL/vendors"
}

// readICDs reads the .icd files of dir (or dir itself, a file), and tries
// to load with load the library of each one that registers NVIDIA's
// OpenCL.
func readICDs(dir string, load func(lib string) error) []icdFile {
	paths := []string{dir}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		paths, _ = filepath.Glob(filepath.Join(dir, "*.icd"))
	}
	var out []icdFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := icdFile{path: p, lib: strings.TrimSpace(string(b))}
		if f.nvidia() {
			f.loadErr = load(f.lib)
		}
		out = append(out, f)
	}
	return out
}

// tryLoad loads lib with dlopen and unloads it.
func tryLoad(lib string) error {
	defer sigsave.Keep()()
	c := C.CString(lib)
	defer C.free(unsafe.Pointer(c))
	if msg := C.dgen_try_open(c); msg != nil {
		return errors.New(C.GoString(msg))
	}
	return nil
}

// missingCompiler says what is missing for NVIDIA's OpenCL to compile for
// the CUDA device called name: given the ICD files of dir, the GPUs that
// NVIDIA's OpenCL platforms list, and the error of listing OpenCL's
// platforms.
func missingCompiler(name string, dir string, icds []icdFile, gpus []driver.DeviceInfo, listErr error) string {
	var nv []icdFile
	var others []string
	for _, f := range icds {
		if f.nvidia() {
			nv = append(nv, f)
		} else {
			others = append(others, filepath.Base(f.path))
		}
	}
	if len(nv) == 0 {
		has := "no .icd file"
		if len(others) > 0 {
			has = "only " + strings.Join(others, ", ")
		}
		return fmt.Sprintf("no OpenCL ICD file registers NVIDIA's OpenCL (%s has %s): create %s holding %s",
			dir, has, filepath.Join(dir, nvidiaICD), nvidiaLib)
	}
	for _, f := range nv {
		if f.loadErr != nil {
			return fmt.Sprintf("%s names %s, which does not load (%v): NVIDIA's OpenCL library (%s, part of the driver) is missing",
				f.path, f.lib, f.loadErr, nvidiaLib)
		}
	}
	if len(gpus) == 0 {
		why := ""
		if listErr != nil {
			why = fmt.Sprintf(" (listing OpenCL's platforms: %v)", listErr)
		}
		return fmt.Sprintf("%s names %s, which loads, but no NVIDIA OpenCL platform lists a GPU%s", nv[0].path, nv[0].lib, why)
	}
	var names []string
	for _, d := range gpus {
		names = append(names, fmt.Sprintf("%q", d.Name))
	}
	slices.Sort(names)
	return fmt.Sprintf("NVIDIA's OpenCL lists no GPU named %q (it lists %s)", name, strings.Join(slices.Compact(names), ", "))
}

// matchCompilers gives each CUDA device of devs the NVIDIA OpenCL GPU of
// the same name among gpus, with its versions and extensions, or the
// reason it has none, from why.
func matchCompilers(devs []devInfo, gpus []driver.DeviceInfo, why func(name string) string) {
	for i := range devs {
		d := &devs[i]
		for j := range gpus {
			if gpus[j].Name == d.info.Name {
				d.compiler = &gpus[j]
				d.info.OpenCLCVersion = gpus[j].OpenCLCVersion
				d.info.DriverVersion = gpus[j].DriverVersion + " (CUDA " + versionString(lib.version) + ")"
				d.info.Extensions = gpus[j].Extensions
				break
			}
		}
		if d.compiler == nil {
			d.noCompiler = why(d.info.Name)
		}
	}
}

// compilerError returns the error of opening a context on d where it has
// no compiler, nil where it has one.
func (d *devInfo) compilerError() error {
	if d.compiler != nil {
		return nil
	}
	return fmt.Errorf("%w %q: %s; or run on NVIDIA's OpenCL with DGEN_BACKEND=opencl once it is registered",
		ErrNoCompiler, d.info.Name, d.noCompiler)
}

// Declined implements driver.AutoDecliner: why Auto reports false although
// libcuda loads and lists devices, which is that no device has NVIDIA's
// OpenCL to compile for it; nil where Auto reports true or libcuda lists
// no device.
func (b Backend) Declined() error {
	ds, err := listDevices()
	if err != nil || len(ds) == 0 || b.Auto() {
		return nil
	}
	var errs []error
	for i := range ds {
		errs = append(errs, ds[i].compilerError())
	}
	return errors.Join(errs...)
}
