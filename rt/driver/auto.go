package driver

import (
	"fmt"
	"sort"
)

// AutoBackend is implemented by a backend that automatic selection
// (DGEN_BACKEND=auto, the default) tries before "opencl": one that runs
// some devices better than OpenCL does, as rt/cuda runs NVIDIA GPUs.
type AutoBackend interface {
	Backend
	// Auto reports whether the backend is usable here and has devices it
	// prefers to run: automatic selection tries it first then.
	Auto() bool
}

// AutoDecliner is an AutoBackend that can say why its Auto reports false
// although it has devices here: a part it needs is missing. rt adds the
// reason to the error of an automatic selection that finds no device, so
// that a user whose GPU the backend would run learns what to install.
type AutoDecliner interface {
	AutoBackend
	// Declined returns why Auto reports false, or nil where Auto reports
	// true or the backend has no devices here.
	Declined() error
}

// AutoDeclined returns the reasons of the registered AutoDecliners that
// decline automatic selection, each naming its backend, sorted by name.
func AutoDeclined() []error {
	backends.RLock()
	var ds []AutoDecliner
	var names []string
	for n, b := range backends.m {
		if d, ok := b.(AutoDecliner); ok {
			ds = append(ds, d)
			names = append(names, n)
		}
	}
	backends.RUnlock()
	var out []error
	for i, d := range ds {
		if err := d.Declined(); err != nil {
			out = append(out, fmt.Errorf("backend %s declined: %w", names[i], err))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Error() < out[j].Error() })
	return out
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
