// Package core is the implementation of package rt: contexts, queues,
// kernels and their launch records, memory and its generations, the launch
// path, images, graphs and the rest. It has three facades, one per
// audience, and no other importer:
//
//   - rt, for applications, declares an alias of every type an
//     application uses and a function of every entry point;
//   - rt/codegen, for code that dgen generates, names Kernel as Instance
//     and calls the launch path of generated.go;
//   - rt/raw, for hand-written launches, is a Kernel with the setters of
//     raw.go and kernelinfo.go.
//
// The facades reach the implementation through its exported names alone:
// no function tables installed at init, and no unsafe conversions between
// their types. An exported method of a type that rt aliases is part of
// rt's API, documented for applications (rt's TestAudience checks it);
// what only rt/codegen or rt/raw calls is a function of this package or a
// method of Kernel, which rt does not alias.
//
// The invariants of the types that launches share (who owns a Kernel, what
// a Mem keeps, what a launch record may read, which lock guards what) are
// stated on the types: Kernel (kernel.go), Mem (buffer.go), Queue
// (queue.go) and the instance slots (instance.go).
package core
