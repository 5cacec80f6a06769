package core

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
	_ "github.com/dgen-go/dgen/rt/opencl" // registers "opencl", which Backend's text names
)

// enumValue is the interface every enum of rt implements.
type enumValue interface {
	fmt.Stringer
	encoding.TextMarshaler
}

// TestEnumText: every named value of every enum round-trips through
// MarshalText and UnmarshalText and prints its name; an unknown name is
// an error wrapping ErrInvalidArgument that lists the valid ones; a value
// without a name prints as T(n) and does not marshal.
func TestEnumText(t *testing.T) {
	tests := []struct {
		typ     string
		names   enumNames
		value   func(int) enumValue
		parse   func(string) (enumValue, error)
		unknown string // an invalid name
		listed  string // a part of the error's list
	}{
		{"ImageKind", imageKindNames, func(i int) enumValue { return ImageKind(i) },
			func(s string) (enumValue, error) { var v ImageKind; return v, v.UnmarshalText([]byte(s)) },
			"image2d", "image1d_t, image1d_buffer_t, image1d_array_t, image2d_t, image2d_array_t, image3d_t"},
		{"ChannelOrder", channelOrderNames, func(i int) enumValue { return ChannelOrder(i) },
			func(s string) (enumValue, error) { var v ChannelOrder; return v, v.UnmarshalText([]byte(s)) },
			"RGBZ", "RGBA, BGRA"},
		{"ChannelType", channelTypeNames, func(i int) enumValue { return ChannelType(i) },
			func(s string) (enumValue, error) { var v ChannelType; return v, v.UnmarshalText([]byte(s)) },
			"UNORM8", "UNORM_INT8"},
		{"Access", accessNames, func(i int) enumValue { return Access(i) },
			func(s string) (enumValue, error) { var v Access; return v, v.UnmarshalText([]byte(s)) },
			"readonly", "read_write, read_only, write_only"},
		{"AddressMode", addressNames, func(i int) enumValue { return AddressMode(i) },
			func(s string) (enumValue, error) { var v AddressMode; return v, v.UnmarshalText([]byte(s)) },
			"wrap", "clamp_to_edge, clamp, none, repeat, mirrored_repeat"},
		{"FilterMode", filterNames, func(i int) enumValue { return FilterMode(i) },
			func(s string) (enumValue, error) { var v FilterMode; return v, v.UnmarshalText([]byte(s)) },
			"cubic", "nearest, linear"},
		{"DeviceType", deviceTypeNames, func(i int) enumValue { return DeviceType(i) },
			func(s string) (enumValue, error) { var v DeviceType; return v, v.UnmarshalText([]byte(s)) },
			"fpga", "other, cpu, gpu, accelerator"},
		{"GraphMode", graphModeNames, func(i int) enumValue { return GraphMode(i) },
			func(s string) (enumValue, error) { var v GraphMode; return v, v.UnmarshalText([]byte(s)) },
			"on", "auto, native, loop"},
		{"AllocPolicy", allocPolicyNames, func(i int) enumValue { return AllocPolicy(i) },
			func(s string) (enumValue, error) { var v AllocPolicy; return v, v.UnmarshalText([]byte(s)) },
			"lifo", "full, tagged, bestfit"},
		{"Priority", priorityNames, func(i int) enumValue { return Priority(i) },
			func(s string) (enumValue, error) { var v Priority; return v, v.UnmarshalText([]byte(s)) },
			"urgent", "normal, high, low"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			for i, name := range tt.names {
				v := tt.value(i)
				if name == "" {
					if got, want := v.String(), fmt.Sprintf("%s(%d)", tt.typ, i); got != want {
						t.Errorf("String() = %q, want %q", got, want)
					}
					if _, err := v.MarshalText(); !errors.Is(err, ErrInvalidArgument) {
						t.Errorf("MarshalText of %v: %v, want ErrInvalidArgument", v, err)
					}
					continue
				}
				b, err := v.MarshalText()
				if err != nil || string(b) != name || v.String() != name {
					t.Errorf("value %d: MarshalText %q, %v; String %q; want %q", i, b, err, v.String(), name)
				}
				if back, err := tt.parse(name); err != nil || back != v {
					t.Errorf("UnmarshalText(%q) = %v, %v; want %v", name, back, err, v)
				}
			}
			v := tt.value(len(tt.names) + 3)
			if got := v.String(); got != fmt.Sprintf("%s(%d)", tt.typ, len(tt.names)+3) {
				t.Errorf("String of an unnamed value: %q", got)
			}
			_, err := tt.parse(tt.unknown)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.listed) || !strings.Contains(err.Error(), tt.unknown) {
				t.Errorf("UnmarshalText(%q) = %v, want an error wrapping ErrInvalidArgument that names it and lists %q", tt.unknown, err, tt.listed)
			}
		})
	}
}

// TestChannelTables: every channel order has a channel count and every
// channel type a size, so that pixelSize knows every format the enums
// name.
func TestChannelTables(t *testing.T) {
	for o, name := range channelOrderNames {
		if name != "" && (o >= len(channelCounts) || channelCounts[o] == 0) {
			t.Errorf("channel order %s has no channel count", name)
		}
	}
	for ty, name := range channelTypeNames {
		if name != "" && (ty >= len(channelSizes) || channelSizes[ty].bytes == 0) {
			t.Errorf("channel type %s has no size", name)
		}
	}
}

// TestBackendText: Backend parses "auto", nothing and the registered
// backends, in any case; another name is an error listing the registered
// ones.
func TestBackendText(t *testing.T) {
	tests := []struct {
		in   string
		want Backend
		err  bool
	}{
		{"", BackendAuto, false},
		{"auto", BackendAuto, false},
		{" AUTO ", BackendAuto, false},
		{"opencl", BackendOpenCL, false},
		{"OpenCL", BackendOpenCL, false},
		{"cdua", "", true},
	}
	for _, tt := range tests {
		var b Backend
		err := b.UnmarshalText([]byte(tt.in))
		if tt.err {
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "opencl") || !strings.Contains(err.Error(), tt.in) {
				t.Errorf("UnmarshalText(%q) = %v, want an error naming it and listing opencl", tt.in, err)
			}
			continue
		}
		if err != nil || b != tt.want {
			t.Errorf("UnmarshalText(%q) = %q, %v; want %q", tt.in, b, err, tt.want)
		}
	}
	if BackendAuto.String() != "auto" || BackendCUDA.String() != "cuda" {
		t.Errorf("String: %q, %q", BackendAuto.String(), BackendCUDA.String())
	}
}

// TestLoggerWarns: the context's warnings go to Config.Logger as slog
// records with attributes, and nothing is printed elsewhere; with no
// Logger they go to slog.Default().
func TestLoggerWarns(t *testing.T) {
	var buf bytes.Buffer
	c := &Context{settings: contextSettings{logger: slog.New(slog.NewTextHandler(&buf, nil))}}
	cfg := CacheConfig{Disk: DiskCacheConfig{Dir: "/dev/null/cache", Persistent: true}}
	c.initCache(cfg)
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, `msg="dgen: persistent program cache off"`) || !strings.Contains(out, "dir=/dev/null/cache") || !strings.Contains(out, "err=") {
		t.Errorf("log %q, want one warning with the directory and the error", out)
	}
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	defer slog.SetDefault(old)
	(&Context{}).log().Warn("x", "k", 1)
	if !strings.Contains(def.String(), "k=1") {
		t.Errorf("a context without a Logger logged %q to slog.Default()", def.String())
	}
}

// TestGraphConfig: GraphsAuto and GraphsNative allow the native graph
// objects, GraphsLoop none; the environment has no say.
func TestGraphConfig(t *testing.T) {
	t.Setenv("DGEN_GRAPHS", "loop")
	t.Setenv("DGEN_CUDA_GRAPH", "0")
	for mode, want := range map[GraphMode]bool{GraphsAuto: true, GraphsNative: true, GraphsLoop: false} {
		cfg := Config{Graphs: mode}
		gc := cfg.graphConfig()
		for _, n := range []driver.NativeGraph{driver.CommandBuffer, driver.CUDAGraph} {
			if gc.allows(n) != want {
				t.Errorf("%v: allows(%v) = %v, want %v", mode, n, gc.allows(n), want)
			}
		}
	}
	if err := (&Config{Graphs: GraphMode(7)}).check(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("GraphMode(7): %v, want ErrInvalidArgument", err)
	}
}

// TestCacheTraceLogs: DiskCacheConfig.Trace sends the caches' trace lines
// through the logger, one Info record a line, and without it there is no
// trace writer.
func TestCacheTraceLogs(t *testing.T) {
	tests := []struct {
		write string
		want  []string
	}{
		{"hit p1\n", []string{`msg="hit p1"`}},
		{"a\nb\n", []string{"msg=a", "msg=b"}},
		{"no newline", []string{`msg="no newline"`}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w := DiskCacheConfig{Trace: true}.diskConfig(slog.New(slog.NewTextHandler(&buf, nil))).Trace
		if w == nil {
			t.Fatal("no trace writer with Trace set")
		}
		if n, err := w.Write([]byte(tt.write)); n != len(tt.write) || err != nil {
			t.Errorf("Write(%q) = %d, %v", tt.write, n, err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != len(tt.want) {
			t.Fatalf("Write(%q) logged %q, want %d records", tt.write, buf.String(), len(tt.want))
		}
		for i, l := range lines {
			if !strings.Contains(l, "level=INFO") || !strings.HasSuffix(l, tt.want[i]) {
				t.Errorf("record %d of %q: %q, want an Info record ending %s", i, tt.write, l, tt.want[i])
			}
		}
	}
	if w := (DiskCacheConfig{}).diskConfig(slog.Default()).Trace; w != nil {
		t.Errorf("trace writer %v without Trace", w)
	}
}
