package core

import (
	"context"
	"runtime"
	rtrace "runtime/trace"
	"strconv"

	"github.com/dgen-go/dgen/rt/trace"
)

// Go's execution tracer. While it is on (runtime/trace.Start, go test
// -trace, a runtime/trace.FlightRecorder), every command that a goroutine
// enqueues is also a log event of that goroutine in Go's trace, of the
// category "dgen": what the command is (a kernel with its program and
// spec), the device, and the user's source line that enqueued it; and
// every allocation from an allocator, with its site's name. go tool
// trace then shows GPU work on the goroutine that issued it, beside the
// scheduler, the collector and system calls. While it is off, a command
// pays one call of runtime/trace.IsEnabled, an atomic load
// (BenchmarkGoTraceOff). The log event itself is goTrace's (tracing.go),
// which beginTask calls for every command but a launch; a launch and an
// allocation log theirs with the details below.

// goTraceCategory is the category of rt's log events in Go's execution
// tracer (runtime/trace.Log).
const goTraceCategory = "dgen"

// goTraceKernel logs a launch of k to Go's execution tracer, with its
// program and, for the launch of a spec's instance inst, the spec. skip is
// as for goTrace.
func (q *Queue) goTraceKernel(k *kernelObject, inst *Kernel, skip int) {
	detail := ""
	if k.prog != nil {
		detail = " program " + strconv.Quote(k.prog.name)
	}
	if inst != nil && inst.decl != nil {
		detail += " spec " + inst.decl.ID
	}
	q.goTrace(trace.Kernel, k.label, detail, skip+1)
}

// goTraceAlloc logs an allocation of size bytes for the site named site
// to Go's execution tracer. skip is as for goTrace.
func (q *Queue) goTraceAlloc(site string, size int64, skip int) {
	msg := "alloc " + strconv.FormatInt(size, 10) + " bytes for " + site + " on " + strconv.Quote(q.dev.Name)
	if _, file, line, ok := runtime.Caller(skip + 3); ok { // as goTrace
		msg += " at " + file + ":" + strconv.Itoa(line)
	}
	rtrace.Log(context.Background(), goTraceCategory, msg)
}
