//go:build cgo

package opencl

import "sync/atomic"

// A build's diagnostics reach the caller through the build log alone
// (clGetProgramBuildInfo), which the error of a failed build carries; the
// backend never redirects the process's standard error.
//
// PoCL 3 compiles with clang, and clang's CompilerInstance writes its
// summary of a build's diagnostics ("2 errors generated.", "1 warning
// generated.") to the process's standard error, beside the log. With
// POCL_DEBUG unset, that line is all PoCL writes there during a build.
// Clang leaves it out under -fno-caret-diagnostics, which PoCL's check of
// build options refuses; but that check splits the options at spaces,
// while PoCL hands clang the options split at any white space, so the flag
// reaches clang alone when a tab joins it to an option that PoCL passes
// unchecked: "-I.", which PoCL already puts on clang's include path (a
// duplicate search directory changes nothing). A PoCL that refuses the
// pair (CL_INVALID_BUILD_OPTIONS where the caller's options alone do not
// fail so) is not asked again in this process, and its summary lines then
// reach standard error, as any OpenCL program on PoCL shows them.
var poclQuiet = "-I.\t-fno-caret-diagnostics "

// poclLoud is set once PoCL has refused poclQuiet. (poclQuiet is a variable
// so that a test can give PoCL a flag it refuses.)
var poclLoud atomic.Bool
