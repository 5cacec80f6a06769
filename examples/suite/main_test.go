package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// TestTable prints the table for one program and checks its rows and
// JSON lines.
func TestTable(t *testing.T) {
	var out, js bytes.Buffer
	o := Options{Reps: 2, Programs: []string{"bfs"}, Modes: Modes(), Seed: 7}
	if err := Table(&out, &js, o); err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
	lines := strings.Split(strings.TrimSpace(js.String()), "\n")
	if want := len(bfs.Datasets) * len(o.Modes); len(lines) != want {
		t.Fatalf("%d JSON lines, want %d", len(lines), want)
	}
	for i, l := range lines {
		var r Row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		ds := bfs.Datasets[i/len(o.Modes)]
		if r.Program != "bfs" || r.Dataset != ds.Name || r.Size != ds.Small || r.Mode != o.Modes[i%len(o.Modes)] ||
			!r.Verified || r.Reps != 2 || r.Futhark != ds.Futhark || r.Device == "" {
			t.Errorf("line %d: %+v", i, r)
		}
		if !(r.MinMs > 0 && r.MinMs <= r.MedianMs && r.MedianMs <= r.MaxMs && r.SpeedupMin <= r.Speedup && r.Speedup <= r.SpeedupMax) {
			t.Errorf("line %d: figures out of order: %+v", i, r)
		}
		if r.Mode == DriverMode && (r.Speedup != 1 || r.DriverAllocs == 0) {
			t.Errorf("line %d: driver mode with speedup %g and %d driver allocations", i, r.Speedup, r.DriverAllocs)
		}
		if !strings.Contains(out.String(), ds.Name) {
			t.Errorf("the table has no row for %s", ds.Name)
		}
	}
}

// TestBadOptions checks that what a table run cannot measure is an error
// before anything runs.
func TestBadOptions(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{Reps: 1, Modes: []string{"full", "driver"}}, "the first must be"},
		{Options{Reps: 0, Modes: Modes()}, "repetitions"},
		{Options{Reps: 1, Modes: Modes(), Programs: []string{"nbody"}}, `no program "nbody"`},
		{Options{Reps: 1, Modes: []string{"driver", "buddy"}, Programs: []string{"bfs"}}, `policy "buddy"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			var out bytes.Buffer
			err := Table(&out, nil, tt.o)
			testenv.SkipWithoutDevice(t, err)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Table(%+v) = %v, want an error containing %q", tt.o, err, tt.want)
			}
		})
	}
}

// TestBadSizes checks that programs reject sizes they cannot run.
func TestBadSizes(t *testing.T) {
	e, err := OpenEnv(DriverMode)
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer e.Close()
	for _, tc := range []struct {
		p Program
		s Size
	}{{lud, Size{N: 40}}, {hotspot, Size{N: 16}}} {
		if c, err := tc.p.New(e, tc.s, 1); !errors.Is(err, rt.ErrInvalidArgument) {
			if c != nil {
				c.Close()
			}
			t.Errorf("%s.New(%+v) = %v, want an error wrapping ErrInvalidArgument", tc.p.Name, tc.s, err)
		}
	}
}

// BenchmarkPrograms times one run of each program on its first dataset's
// small size in every mode (go test -bench Programs ./examples/suite;
// the table command measures the rest).
func BenchmarkPrograms(b *testing.B) {
	for _, p := range Programs {
		for _, m := range Modes() {
			b.Run(fmt.Sprintf("%s/%s/%s", p.Name, p.Datasets[0].Name, m), func(b *testing.B) {
				e, err := OpenEnv(m)
				if err != nil {
					testenv.SkipWithoutDevice(b, err)
					b.Fatal(err)
				}
				defer e.Close()
				c, err := p.New(e, p.Datasets[0].Small, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if err := c.Run(); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if err := c.Verify(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
