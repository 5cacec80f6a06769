package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/trace"
)

func TestTraceSummary(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.json")
	tr, err := trace.Open("perfetto:"+file, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := tr.Device(0, "dev").Queue(0, "queue 0", true)
	for range 3 {
		tk := q.Begin(trace.Kernel, "saxpy", 0)
		tk.End()
		tk.Complete(tk.HostEnd+10, tk.HostEnd+500)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	// The file of a process that exited without closing its tracer: no
	// closing bracket.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "unclosed.json")
	if err := os.WriteFile(open, bytes.TrimRight(data, "]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The file of a process that ended without closing its tracer:
	// records.
	recs := filepath.Join(t.TempDir(), "records.json")
	tr2, err := trace.Open("perfetto:"+recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	q2 := tr2.Device(0, "dev").Queue(0, "queue 0", true)
	for range 4 {
		tk := q2.Begin(trace.Kernel, "axpy", 0)
		tk.End()
	}
	data2, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	tr2.Close()
	if err := os.WriteFile(recs, data2, 0o644); err != nil {
		t.Fatal(err)
	}
	inPlace := filepath.Join(t.TempDir(), "inplace.json")
	if err := os.WriteFile(inPlace, data2, 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(t.TempDir(), "out.json")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte("not a trace"), 0o644)
	tests := []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"trace", "summary", recs}, 0, "axpy", ""},
		{[]string{"trace", "json", recs}, 0, `"name":"axpy"}`, ""},
		{[]string{"trace", "json", open}, 0, `"name":"saxpy"}`, ""},
		{[]string{"trace", "json", "-o", outFile, recs}, 0, "", ""},
		{[]string{"trace", "json", "-w", inPlace}, 0, "", ""},
		{[]string{"trace", "json", bad}, 1, "", "neither a dgen record file nor a JSON trace"},
		{[]string{"trace", "json", "-w", "-o", outFile, recs}, 2, "", "usage:"},
		{[]string{"trace", "json"}, 2, "", "usage:"},
		{[]string{"trace", "summary", file}, 0, "trace_test.go:", ""},
		{[]string{"trace", "summary", open}, 0, "trace_test.go:", ""},
		{[]string{"trace", "summary", filepath.Join(t.TempDir(), "none.json")}, 1, "", "dgen trace summary:"},
		{[]string{"trace", "summary"}, 2, "", "usage: dgen trace summary FILE"},
		{[]string{"trace"}, 2, "", "usage: dgen trace summary FILE"},
		{[]string{"trace", "bogus"}, 2, "", `unknown subcommand "bogus"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.out) || !strings.Contains(stderr.String(), tt.errOut) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout.String(), stderr.String(), tt.code, tt.out, tt.errOut)
			}
		})
	}
	for _, f := range []string{outFile, inPlace} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var events []map[string]any
		if err := json.Unmarshal(data, &events); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		n := 0
		for _, e := range events {
			if e["name"] == "axpy" {
				n++
			}
		}
		if n != 4 {
			t.Errorf("%s: %d slices of axpy, want 4", f, n)
		}
	}
}
