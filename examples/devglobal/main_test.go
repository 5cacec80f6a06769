package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/trace"
)

// TestRun runs the example on the default device (PoCL here) and checks
// every value it verifies.
func TestRun(t *testing.T) {
	res, err := run(t.Logf)
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	if res["counter"] != uint32(64*1+64*6) {
		t.Errorf("counter = %v, want %d", res["counter"], 64*7)
	}
	for _, k := range []string{"bounds_error", "host_access_error", "steps", "seen", "scale"} {
		if _, ok := res[k]; !ok {
			t.Errorf("result has no %q", k)
		}
	}
}

// TestTraceCallSite checks that a generated Enqueue and the device-global
// accessors are traced at the exact line of the user's code that called
// them, not inside rt or generated code.
func TestTraceCallSite(t *testing.T) {
	tr := trace.New()
	var rec trace.Recorder
	tr.Subscribe(&rec)
	ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(testenv.Backend()), Device: testenv.Device(), Tracer: tr})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	var b4 [4]byte
	// Each call is on the line of its table entry, which line() returns.
	tests := []struct {
		name string // the node's command name
		line int
		do   func() error
	}{
		{"count", line(), func() error { return (&Count{Per: 1}).Enqueue(q, rt.Range1(4)) }},
		{"count", line(), func() error { ev, err := (&Count{Per: 1}).EnqueueEvent(q, rt.Range1(4)); ev.Release(); return err }},
		{"write device global", line(), func() error { return Counter.Write(q, 5) }},
		{"read device global", line(), func() error { _, err := P.Read(q); return err }},
		{"write device global", line(), func() error { return Seen.WriteBytes(q, 0, b4[:]) }},
		{"read device global", line(), func() error { return Steps.ReadBytes(q, 0, b4[:]) }},
	}
	for _, tt := range tests {
		for range 3 {
			if err := tt.do(); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	want := make(map[int]string)
	for _, tt := range tests {
		want[tt.line] = tt.name
	}
	for _, n := range tr.Nodes() {
		if !strings.HasSuffix(n.File, "main_test.go") || want[n.Line] != n.Name || !strings.Contains(n.Func, "TestTraceCallSite") {
			t.Errorf("%s traced at %s (%s:%d), want this test at one of the lines %v", n.Name, n.Func, n.File, n.Line, want)
		}
		delete(want, n.Line)
	}
	if len(want) != 0 {
		t.Errorf("no node for the calls at lines %v", want)
	}
}

// line returns the line of its caller.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}
