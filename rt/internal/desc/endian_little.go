//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package desc

// bigEndian reports whether the machine stores the most significant byte
// of a number first.
const bigEndian = false
