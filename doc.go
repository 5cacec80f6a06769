// Package dgen is the root of the dgen module: a go generate driven host runtime
// for OpenCL devices. See the README, the rt package for the runtime, and
// cmd/dgen for the generator command.
package dgen
