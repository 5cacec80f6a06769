package driver

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DeviceFault is the error of a context whose device faulted: a kernel
// wrote out of bounds, executed an illegal instruction, or the device
// reported another error after which the backend's context cannot be used
// (CUDA's "sticky" errors; NVIDIA OpenCL's lost queue). rt records the
// first one a context notices, with the launches that were in flight, and
// returns it from every later call on the context; rt.DeviceFault is this
// type, and rt's documentation says what to do with it. errors.Is(err,
// ErrDeviceFault) reports it.
type DeviceFault struct {
	// Backend names the backend that faulted ("cuda", "opencl"), Device the
	// device's name and platform, as Device.String gives them.
	Backend, Device string
	// Err is the error of the call that noticed the fault: the call and
	// the backend's code. It wraps ErrDeviceFault.
	Err error
	// Launches are the launches that were in flight on the device when the
	// fault was noticed: enqueued on one of the context's queues since
	// that queue's last completed synchronisation (Finish, a blocking
	// transfer, or under SyncLaunches the launch's own), oldest first on
	// each queue, at most 64 a queue. Omitted counts those left out.
	Launches []SuspectLaunch
	Omitted  int
	// Exact reports that the context synchronised after every launch
	// (Config.SyncLaunches): then the one launch listed is the one that
	// faulted.
	Exact bool
	// Time is when the fault was noticed.
	Time time.Time
}

// SuspectLaunch is a launch that was in flight when a device fault was
// noticed: its queue, kernel and program, and, where the context
// synchronised after every launch, the Go line that enqueued it.
type SuspectLaunch struct {
	// Queue is the number of the queue it was enqueued on, in its
	// context (0 for the default queue).
	Queue int
	// Kernel and Program name the kernel and its program; a graph launch
	// is Kernel "graph NAME", with the kernels it launches as Program.
	Kernel, Program string
	// File and Line are the Go call that enqueued it (the call of a
	// generated Enqueue, of rt/raw's Launch or Submit, or of
	// Graph.Launch): recorded under Config.SyncLaunches only, since
	// reading the caller's line costs more than the rest of a launch's
	// host path; empty otherwise.
	File string
	Line int
}

// Error describes the fault: the device, the call that noticed it and
// the launches in flight.
func (f *DeviceFault) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "device fault on %s (backend %s): %v", f.Device, f.Backend, f.Err)
	switch {
	case f.Exact && len(f.Launches) == 1:
		b.WriteString("; the faulting launch (launches synchronised): ")
	case len(f.Launches) > 0:
		b.WriteString("; launches in flight: ")
	default:
		b.WriteString("; no launch in flight")
	}
	for i, l := range f.Launches {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.String())
	}
	if f.Omitted > 0 {
		fmt.Fprintf(&b, " and %d more", f.Omitted)
	}
	if !f.Exact && len(f.Launches) > 0 {
		b.WriteString(" (Config.SyncLaunches, DGEN_SYNC_LAUNCHES=1, names the one that faulted, with its line)")
	}
	b.WriteString("; the context is unusable: Close it")
	return b.String()
}

// String describes the launch: "kernel K (program P) on queue N at FILE:LINE".
func (l SuspectLaunch) String() string {
	s := fmt.Sprintf("kernel %s", l.Kernel)
	if l.Program != "" {
		s += fmt.Sprintf(" (program %s)", l.Program)
	}
	s += " on queue " + strconv.Itoa(l.Queue)
	if l.File != "" {
		s += fmt.Sprintf(" at %s:%d", l.File, l.Line)
	}
	return s
}

// Unwrap returns the error of the call that noticed the fault.
func (f *DeviceFault) Unwrap() error { return f.Err }

// Is reports whether target is ErrDeviceFault, which every DeviceFault
// means.
func (f *DeviceFault) Is(target error) bool { return target == ErrDeviceFault }
