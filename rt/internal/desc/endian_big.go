//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package desc

import "unsafe"

// bigEndian reports whether the machine stores the most significant byte
// of a number first. This build's is not known to be little endian; it is
// checked at package initialization.
const bigEndian = true

func init() {
	if x := uint16(1); *(*byte)(unsafe.Pointer(&x)) != 0 {
		panic("desc: a little-endian machine built as big endian: add its GOARCH to endian_little.go")
	}
}
