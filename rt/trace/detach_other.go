//go:build unix && !linux

package trace

import "unsafe"

// detach leaves the mapping in place: late stores still reach the file's
// pages, which nothing reads any more.
func detach(mem unsafe.Pointer, size uint64) error { return nil }

const mapNoReserve = 0
