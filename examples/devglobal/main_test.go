package main

import (
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/trace"
)

// TestRun runs the example on the default device (PoCL here) and checks
// every value it verifies.
func TestRun(t *testing.T) {
	res, err := run(t.Logf)
	if err != nil {
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

// TestTraceCallSite checks that a generated Enqueue is traced at the line
// of the user's code that called it, not inside rt or generated code.
func TestTraceCallSite(t *testing.T) {
	tr := trace.New()
	var rec trace.Recorder
	tr.Subscribe(&rec)
	ctx, err := rt.OpenConfig(rt.Config{Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	q := ctx.Queue()
	for i := 0; i < 3; i++ {
		if _, err := (&Count{Per: 1}).Enqueue(q, rt.Range1(4)); err != nil { // the traced line
			t.Fatal(err)
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range tr.Nodes() {
		if n.Name == "count" {
			found = true
			if !strings.HasSuffix(n.File, "main_test.go") || !strings.Contains(n.Func, "TestTraceCallSite") {
				t.Errorf("count traced at %s (%s:%d), want this test", n.Func, n.File, n.Line)
			}
		}
	}
	if !found {
		t.Errorf("no node for kernel count among %d nodes", len(tr.Nodes()))
	}
}
