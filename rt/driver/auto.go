package driver

import "sort"

// AutoBackend is implemented by a backend that automatic selection
// (DGEN_BACKEND=auto, the default) tries before "opencl": one that runs
// some devices better than OpenCL does, as rt/cuda runs NVIDIA GPUs.
type AutoBackend interface {
	Backend
	// Auto reports whether the backend is usable here and has devices it
	// prefers to run: automatic selection tries it first then.
	Auto() bool
}

// AutoBackends returns the names of the backends that automatic selection
// tries, in order: the registered AutoBackends whose Auto reports true,
// sorted by name, then "opencl" if it is registered.
func AutoBackends() []string {
	backends.RLock()
	var auto []AutoBackend
	var names []string
	for n, b := range backends.m {
		if a, ok := b.(AutoBackend); ok && n != "opencl" {
			auto = append(auto, a)
			names = append(names, n)
		}
	}
	_, opencl := backends.m["opencl"]
	backends.RUnlock()
	// Auto may load a library: call it without the lock.
	var out []string
	for i, a := range auto {
		if a.Auto() {
			out = append(out, names[i])
		}
	}
	sort.Strings(out)
	if opencl {
		out = append(out, "opencl")
	}
	return out
}
