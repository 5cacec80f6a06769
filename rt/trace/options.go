package trace

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Spec is one built-in subscriber selected by a DGEN_TRACE value.
type Builtin struct {
	// Name is "perfetto", "summary" or "log".
	Name string
	// Path is the file to write: required for perfetto; optional for
	// summary and log, which print to standard error without one.
	Path string
}

// String returns b in the form ParseOptions reads.
func (b Builtin) String() string {
	if b.Path == "" {
		return b.Name
	}
	return b.Name + ":" + b.Path
}

// Options is a parsed DGEN_TRACE value.
type Options struct {
	// Subscribers are the built-in subscribers selected.
	Subscribers []Builtin
	// DeviceEvery is the device-time sampling that the item "device="
	// selects (see Tracer.SetDeviceSampling): 0 (the default: the host-side
	// task graph only, no profiling), N for one command in N per node, 1
	// (written "device=all") for every command.
	DeviceEvery int
}

// ParseOptions parses a DGEN_TRACE value: a comma-separated list of items,
// each a subscriber ("perfetto:PATH", "summary", "summary:PATH", "log" or
// "log:PATH") or the device-time sampling ("device=N", "device=all" for
// every command, "device=0" or "device=off" for none). Spaces around items
// are ignored; an empty or blank spec selects nothing (tracing off). An
// empty item, an unknown name, perfetto without a path, an item given
// twice, and a device setting without a subscriber are errors. Paths
// cannot contain commas.
func ParseOptions(spec string) (Options, error) {
	var o Options
	if strings.TrimSpace(spec) == "" {
		return o, nil
	}
	sawDevice := false
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return Options{}, fmt.Errorf("trace: %s=%q: item %d is empty", EnvVar, spec, i+1)
		}
		if v, ok := strings.CutPrefix(item, "device="); ok {
			if sawDevice {
				return Options{}, fmt.Errorf("trace: %s=%q: device= is given twice", EnvVar, spec)
			}
			n, err := parseEvery(v)
			if err != nil {
				return Options{}, fmt.Errorf("trace: %s=%q: %w", EnvVar, spec, err)
			}
			o.DeviceEvery, sawDevice = n, true
			continue
		}
		s, err := parseSubscriber(item)
		if err != nil {
			return Options{}, fmt.Errorf("trace: %s=%q: %w", EnvVar, spec, err)
		}
		for _, prev := range o.Subscribers {
			if prev == s {
				return Options{}, fmt.Errorf("trace: %s=%q: %q is given twice", EnvVar, spec, item)
			}
			if s.Path != "" && prev.Path == s.Path {
				return Options{}, fmt.Errorf("trace: %s=%q: %q and %q write the same file", EnvVar, spec, prev.String(), s.String())
			}
		}
		o.Subscribers = append(o.Subscribers, s)
	}
	if sawDevice && len(o.Subscribers) == 0 {
		return Options{}, fmt.Errorf("trace: %s=%q: device= needs a subscriber (perfetto:PATH, summary or log)", EnvVar, spec)
	}
	return o, nil
}

// parseEvery parses the value of a device= item.
func parseEvery(v string) (int, error) {
	switch v {
	case "all":
		return 1, nil
	case "off", "none":
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("device=%s: want a count of commands (device=16), all or off", v)
	}
	return n, nil
}

// parseSubscriber parses a subscriber item.
func parseSubscriber(item string) (Builtin, error) {
	name, path, hasPath := strings.Cut(item, ":")
	name = strings.TrimSpace(name)
	s := Builtin{Name: name, Path: path}
	switch name {
	case "perfetto":
		if path == "" {
			return s, fmt.Errorf("item %q needs a file: perfetto:PATH", item)
		}
	case "summary", "log":
		if hasPath && path == "" {
			return s, fmt.Errorf("item %q has an empty path: write %s or %s:PATH", item, name, name)
		}
	default:
		return s, fmt.Errorf("unknown subscriber %q (want perfetto:PATH, summary[:PATH], log[:PATH] or device=N)", name)
	}
	return s, nil
}

// subCloser is a built-in subscriber.
type subCloser interface {
	Subscriber
	io.Closer
}

// open creates the subscriber s describes.
func (s Builtin) open(stderr io.Writer) (subCloser, error) {
	var w io.Writer = stderr
	var f *os.File
	if s.Path != "" {
		var err error
		f, err = os.Create(s.Path)
		if err != nil {
			return nil, fmt.Errorf("trace: %s: %w", s, err)
		}
		w = f
	}
	if w == nil {
		w = io.Discard
	}
	switch s.Name {
	case "perfetto":
		return newPerfetto(w, f), nil
	case "summary":
		return newSummaryWriter(w, f), nil
	default:
		return newLogger(w, f), nil
	}
}
