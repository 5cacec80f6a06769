package trace

import (
	"fmt"
	"io"
	stdslog "log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Builtin is one built-in subscriber selected by a DGEN_TRACE value.
type Builtin struct {
	// Name is "perfetto", "flight", "summary" or "log".
	Name string
	// Path is the file to write: required for perfetto and flight;
	// optional for summary and log, which print to standard error without
	// one.
	Path string
	// Size is the ring size in bytes of a flight recorder (the item
	// size=), 0 for the default (DefaultFlightSize).
	Size uint64
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
	// Monotonic is set by the item "clock=mono": the Tracer reads the
	// monotonic clock even where the time-stamp counter could serve
	// (clock.go); "clock=tsc", the default, lets it use the counter.
	Monotonic bool
}

// ParseOptions parses a DGEN_TRACE value: a comma-separated list of items,
// each a subscriber ("perfetto:PATH", "flight:PATH", "summary",
// "summary:PATH", "log" or "log:PATH"), the device-time sampling
// ("device=N", "device=all" for every command, "device=0" or "device=off"
// for none), the clock ("clock=mono" for the monotonic clock, "clock=tsc"
// for the time-stamp counter where it runs at a constant rate, the
// default) or the ring size of the flight recorder ("size=64M": a byte
// count with an optional K, M or G suffix, powers of 1024, at least 64K).
// Spaces around items are ignored; an empty or blank spec selects nothing
// (tracing off). An empty item, an unknown name, perfetto or flight without
// a path, an item given twice, a device setting without a subscriber, and
// a size that does not parse or comes without flight are errors. Paths
// cannot contain commas.
func ParseOptions(spec string) (Options, error) {
	var o Options
	if strings.TrimSpace(spec) == "" {
		return o, nil
	}
	sawDevice, sawClock := false, false
	var size uint64
	sawSize := false
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return Options{}, fmt.Errorf("trace: %s=%q: item %d is empty", EnvVar, spec, i+1)
		}
		if v, ok := strings.CutPrefix(item, "size="); ok {
			if sawSize {
				return Options{}, fmt.Errorf("trace: %s=%q: size= is given twice", EnvVar, spec)
			}
			n, err := ParseSize(v)
			if err != nil {
				return Options{}, fmt.Errorf("trace: %s=%q: %w", EnvVar, spec, err)
			}
			size, sawSize = n, true
			continue
		}
		if v, ok := strings.CutPrefix(item, "clock="); ok {
			if sawClock {
				return Options{}, fmt.Errorf("trace: %s=%q: clock= is given twice", EnvVar, spec)
			}
			if v != "mono" && v != "tsc" {
				return Options{}, fmt.Errorf("trace: %s=%q: clock=%q: want mono or tsc", EnvVar, spec, v)
			}
			o.Monotonic, sawClock = v == "mono", true
			continue
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
		return Options{}, fmt.Errorf("trace: %s=%q: device= needs a subscriber (perfetto:PATH, flight:PATH, summary or log)", EnvVar, spec)
	}
	if sawSize {
		i := slices.IndexFunc(o.Subscribers, func(b Builtin) bool { return b.Name == "flight" })
		if i < 0 {
			return Options{}, fmt.Errorf("trace: %s=%q: size= sets the ring of a flight recorder and needs flight:PATH", EnvVar, spec)
		}
		o.Subscribers[i].Size = size
	}
	return o, nil
}

// ParseSize parses the size of a flight recorder's ring: a byte count with
// an optional suffix K, M or G (powers of 1024, optionally followed by B
// or iB), from 64K to 1T.
func ParseSize(v string) (uint64, error) {
	num := strings.TrimSpace(v)
	num = strings.TrimSuffix(strings.TrimSuffix(num, "B"), "i")
	shift := 0
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'K', 'k':
			shift = 10
		case 'M', 'm':
			shift = 20
		case 'G', 'g':
			shift = 30
		case 'T', 't':
			shift = 40
		}
		if shift != 0 {
			num = num[:n-1]
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > maxFlightSize>>shift {
		return 0, sizeError(v)
	}
	n <<= shift
	if n < minFlightSize || n > maxFlightSize {
		return 0, sizeError(v)
	}
	return n, nil
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
	case "perfetto", "flight":
		if path == "" {
			return s, fmt.Errorf("item %q needs a file: %s:PATH", item, name)
		}
	case "summary", "log":
		if hasPath && path == "" {
			return s, fmt.Errorf("item %q has an empty path: write %s or %s:PATH", item, name, name)
		}
	default:
		return s, fmt.Errorf("unknown subscriber %q (want perfetto:PATH, flight:PATH, summary[:PATH], log[:PATH], device=N or size=N)", name)
	}
	return s, nil
}

// subCloser is a built-in subscriber.
type subCloser interface {
	Subscriber
	io.Closer
}

// open creates the subscriber s describes, for t.
func (s Builtin) open(stderr io.Writer, t *Tracer) (subCloser, error) {
	switch s.Name {
	case "perfetto":
		p, err := openPerfetto(s.Path, t)
		if err != nil {
			return nil, fmt.Errorf("trace: %s: %w", s, err)
		}
		return p, nil
	case "flight":
		return newFlight(FlightRecorderConfig{Path: s.Path, MaxBytes: s.Size}, t)
	}
	var w io.Writer = stderr
	var tf *textFile
	if s.Path != "" {
		lock, err := lockPath(s.Path)
		if err != nil {
			return nil, fmt.Errorf("trace: %s: %w", s, err)
		}
		// Appending: after a truncation (logrotate's copytruncate) lines
		// go on at the file's new end, not past a hole.
		path, err := filepath.Abs(s.Path) // the file opened, whatever the working directory later
		var f *os.File
		if err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o666)
		}
		if err != nil {
			lock.release()
			return nil, fmt.Errorf("trace: %s: %w", s, err)
		}
		t.mu.Lock()
		t.locks = append(t.locks, lock)
		t.mu.Unlock()
		tf = &textFile{path: path, f: f, log: t.log}
		if tf.log == nil {
			tf.log = stdslog.Default()
		}
		w = f
	}
	if w == nil {
		w = io.Discard
	}
	switch s.Name {
	case "summary":
		return newSummaryWriter(w, tf, t), nil
	default:
		return newLogger(w, tf), nil
	}
}
