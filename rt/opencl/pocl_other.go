//go:build cgo && !unix

package opencl

// isolatePoCL does nothing where PoCL's several-process problem is not
// handled (see pocl_unix.go).
func isolatePoCL() (restore func()) { return func() {} }
