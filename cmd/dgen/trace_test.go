package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

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

func TestTracePprof(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "trace.json")
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
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("not a trace"), 0o644)
	outFile := filepath.Join(dir, "gpu.pb.gz")
	for _, tt := range []struct {
		args   []string
		code   int
		errOut string
	}{
		{[]string{"trace", "pprof", file}, 0, ""},
		{[]string{"trace", "pprof", "-o", outFile, file}, 0, ""},
		{[]string{"trace", "pprof", bad}, 1, "not a dgen trace file"},
		{[]string{"trace", "pprof", filepath.Join(dir, "none")}, 1, "dgen trace pprof:"},
		{[]string{"trace", "pprof"}, 2, "usage:"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.errOut) {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.errOut)
			}
			if code != 0 {
				return
			}
			data := stdout.Bytes()
			if len(tt.args) > 3 {
				if data, err = os.ReadFile(outFile); err != nil {
					t.Fatal(err)
				}
			}
			p, err := profile.ParseData(data)
			if err != nil {
				t.Fatal(err)
			}
			var dev int64
			for _, s := range p.Sample {
				if s.Location[0].Line[0].Function.Name == "kernel saxpy" {
					dev += s.Value[2] // device_time
				}
			}
			if p.SampleType[2].Type != "device_time" || dev != 3*490 {
				t.Errorf("%s of kernel saxpy = %d, want %d", p.SampleType[2].Type, dev, 3*490)
			}
		})
	}
}
