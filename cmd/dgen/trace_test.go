package main

import (
	"bytes"
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
	tests := []struct {
		args        []string
		code        int
		out, errOut string
	}{
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
}
