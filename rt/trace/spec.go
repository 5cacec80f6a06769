package trace

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Spec is one built-in subscriber selected by a DGEN_TRACE value.
type Spec struct {
	// Name is "perfetto", "summary" or "log".
	Name string
	// Path is the file to write: required for perfetto; optional for
	// summary and log, which print to standard error without one.
	Path string
}

// String returns the spec in the form ParseSpec reads.
func (s Spec) String() string {
	if s.Path == "" {
		return s.Name
	}
	return s.Name + ":" + s.Path
}

// ParseSpec parses a subscriber spec, the value of DGEN_TRACE: a
// comma-separated list of items, each "perfetto:PATH", "summary",
// "summary:PATH", "log" or "log:PATH". Spaces around items are ignored; an
// empty or blank spec selects nothing (tracing off). An empty item, an
// unknown name, perfetto without a path, and an item given twice are errors.
// Paths cannot contain commas.
func ParseSpec(spec string) ([]Spec, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	var out []Spec
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("trace: %s=%q: item %d is empty", EnvVar, spec, i+1)
		}
		name, path, hasPath := strings.Cut(item, ":")
		name = strings.TrimSpace(name)
		s := Spec{Name: name, Path: path}
		switch name {
		case "perfetto":
			if path == "" {
				return nil, fmt.Errorf("trace: %s=%q: item %q needs a file: perfetto:PATH", EnvVar, spec, item)
			}
		case "summary", "log":
			if hasPath && path == "" {
				return nil, fmt.Errorf("trace: %s=%q: item %q has an empty path: write %s or %s:PATH", EnvVar, spec, item, name, name)
			}
		default:
			return nil, fmt.Errorf("trace: %s=%q: unknown subscriber %q (want perfetto:PATH, summary[:PATH] or log[:PATH])", EnvVar, spec, name)
		}
		for _, prev := range out {
			if prev == s {
				return nil, fmt.Errorf("trace: %s=%q: %q is given twice", EnvVar, spec, item)
			}
			if s.Path != "" && prev.Path == s.Path {
				return nil, fmt.Errorf("trace: %s=%q: %q and %q write the same file", EnvVar, spec, prev.String(), s.String())
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// subCloser is a built-in subscriber.
type subCloser interface {
	Subscriber
	io.Closer
}

// open creates the subscriber s describes.
func (s Spec) open(stderr io.Writer) (subCloser, error) {
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
