package main

import "testing"

// BenchmarkCgoCall measures a call of a C function that returns at once,
// declared noescape and nocallback as rt's launch calls are: the cgo
// transition that every launch through a Go binding pays, on this host.
//
//	go test -run '^$' -bench CgoCall -count 10 ./bench/scaling
func BenchmarkCgoCall(b *testing.B) {
	for b.Loop() {
		if cgoNoop() != 0 {
			b.Fatal("sc_noop returned non-zero")
		}
	}
}
