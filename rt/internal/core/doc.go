// Package core is the implementation of package rt: contexts, queues,
// kernels and their launch records, memory and its generations, the launch
// path, images, graphs and the rest. It has three facades, one per
// audience, and no other importer:
//
//   - rt, for applications, is generated from this package's exported
//     declarations (rt/internal/cmd/mkfacade, go generate ./rt): a type
//     of its own over each of this package's that applications use (type
//     Queue core.Queue) with a method forwarding to each exported method
//     here, and the plain data types (Config, ImageDesc, Range, ...)
//     declared with their exported fields, which it converts; the
//     conversions are free (a pointer or a struct of the same fields) or
//     copy a few fields;
//   - rt/codegen, for code that dgen generates, defines Instance over
//     Kernel, with no methods, and calls the launch path of generated.go;
//   - rt/raw, for hand-written launches, defines Kernel over Kernel, with
//     the setters of raw.go and kernelinfo.go.
//
// The facades reach the implementation through its exported names alone:
// no function tables installed at init, and no unsafe conversions between
// their types. A facade's wait list ([]*rt.Event) is converted by Waits,
// into an array on the caller's stack. An exported name of this package
// is part of rt's API unless mkfacade's hidden list, or a type it lists
// in its signature, keeps it out, and its doc comment is rt's: write it
// for applications, and keep what is for this package's maintainers on
// unexported code or in a comment that opens a struct's body. What only
// rt/codegen or rt/raw calls is a function of this package or a method of
// Kernel, which rt does not show; its doc comment points to the facade
// that documents it. The hooks of rt's tests are in testhooks.go, which
// rt does not show either.
//
// The invariants of the types that launches share (who owns a Kernel, what
// a Mem keeps, what a launch record may read, which lock guards what) are
// stated on the types: Context (context.go), Kernel (kernel.go), Mem
// (buffer.go), Queue (queue.go) and the instance slots (instance.go).
package core
