package rt_test

import (
	rtrace "runtime/trace"
	"testing"
)

// BenchmarkGoTraceOff measures what Go's execution tracer costs rt while
// it is off: the one check per command (runtime/trace.IsEnabled), beside
// a generated Enqueue on the null backend. Compare HostPath/enqueue before
// and after the check went in:
//
//	go test ./rt -run '^$' -bench 'GoTraceOff|HostPath$/enqueue$' -count 10
func BenchmarkGoTraceOff(b *testing.B) {
	if rtrace.IsEnabled() {
		b.Skip("Go's execution tracer is on")
	}
	n := 0
	for b.Loop() {
		if rtrace.IsEnabled() {
			n++
		}
	}
	if n != 0 {
		b.Fatal("the tracer came on")
	}
}
