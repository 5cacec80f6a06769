package driver

import "sync"

// Options are what rt tells the backends before it opens one: the
// settings of rt.Config that a backend needs (the libraries it loads).
// rt passes them at every Open (Configure), before it asks any backend
// for its devices; a backend reads them when it first loads its library,
// once per process, so the first Open that loads it decides.
type Options struct {
	// CUDALibrary is the CUDA driver library that rt/cuda opens
	// (rt.Config.CUDALibrary, DGEN_CUDA_LIBRARY); empty means libcuda.so.1.
	CUDALibrary string
	// CUPTILibrary is the CUPTI library that rt/cuda times kernels with
	// (rt.Config.CUPTILibrary, DGEN_CUPTI_LIBRARY); empty means the
	// loader's libcupti.so, then the CUDA toolkit's; "none" means none.
	CUPTILibrary string
}

var options struct {
	sync.Mutex
	o Options
}

// Configure records o for the backends: rt calls it at every Open.
func Configure(o Options) {
	options.Lock()
	defer options.Unlock()
	options.o = o
}

// Configured returns the options last recorded by Configure, the zero
// Options before the first.
func Configured() Options {
	options.Lock()
	defer options.Unlock()
	return options.o
}

// A backend's library may read variables of the process environment
// itself (the OpenCL ICD loader reads OCL_ICD_VENDORS, PoCL reads
// POCL_KERNEL_CACHE and POCL_CACHE_DIR), and a backend must then see what
// its library sees. No backend reads or sets the environment: rt's table
// of variables, the one place that does, lists these too, and installs the
// functions through which a backend reads or sets them (InstallLibraryEnv).
var libraryEnv struct {
	sync.RWMutex
	get func(name string) string
	set func(name, value string) (restore func())
}

// InstallLibraryEnv installs the functions that read and set the
// variables of the process environment that the backends' libraries read
// themselves. rt's core installs them when it initializes; get and set
// refuse a variable that its table does not list.
func InstallLibraryEnv(get func(name string) string, set func(name, value string) (restore func())) {
	libraryEnv.Lock()
	defer libraryEnv.Unlock()
	libraryEnv.get, libraryEnv.set = get, set
}

// LibraryEnv returns the value of the variable name of the process
// environment that a backend's library reads itself: "" where none is
// installed (a backend used without rt) or it is not set.
func LibraryEnv(name string) string {
	libraryEnv.RLock()
	get := libraryEnv.get
	libraryEnv.RUnlock()
	if get == nil {
		return ""
	}
	return get(name)
}

// SetLibraryEnv sets the variable name of the process environment, for a
// backend's library to read as it loads, and returns the function that
// restores it; ok is false, and nothing is set, where no setter is
// installed.
func SetLibraryEnv(name, value string) (restore func(), ok bool) {
	libraryEnv.RLock()
	set := libraryEnv.set
	libraryEnv.RUnlock()
	if set == nil {
		return func() {}, false
	}
	return set(name, value), true
}
