package desc

import (
	"fmt"
	"unsafe"
)

// Launcher is rt's launch path for generated kernel specs, as rt/codegen
// calls it: Q, K, M, E and R are *rt.Queue, *rt.Kernel, *rt.Mem, *rt.Event
// and rt.Range, which this package cannot name. rt installs it from its
// init function; rt/codegen, which imports rt and is therefore initialized
// after it, takes it once (LauncherOf), typed, and calls it directly from
// then on.
type Launcher[Q, K, M, E, R any] struct {
	// Acquire returns the kernel object of k for q's device, locked, with
	// its argument record: the generated Enqueue fills the record and
	// calls Submit or Launch, which unlock it.
	Acquire func(q Q, k *Kernel) (K, error)
	// Scalar sets argument i to a value of size bytes (at most 8) in bits.
	Scalar func(k K, i int, size uintptr, bits uint64)
	// Bytes sets argument i to size bytes at p (more than 8).
	Bytes func(k K, i int, p unsafe.Pointer, size uintptr)
	// Buffer sets argument i to the memory m.
	Buffer func(k K, i int, m M)
	// Local sets argument i, a __local pointer, to size bytes.
	Local func(k K, i int, size int)
	// Submit binds the hidden arguments and launches k over r after wait,
	// with no event, and unlocks it; an error of setting an argument is
	// returned instead, and nothing is launched.
	Submit func(q Q, k K, r R, wait []E) error
	// Launch is Submit with an event.
	Launch func(q Q, k K, r R, wait []E) (E, error)
}

// launcher holds the one *Launcher that rt installs.
var launcher any

// SetLauncher installs rt's launch path. rt calls it once, from init.
func SetLauncher[Q, K, M, E, R any](l *Launcher[Q, K, M, E, R]) { launcher = l }

// LauncherOf returns the launch path that rt installed; rt/codegen asks
// for it once, while its variables are initialized.
func LauncherOf[Q, K, M, E, R any]() *Launcher[Q, K, M, E, R] {
	l, ok := launcher.(*Launcher[Q, K, M, E, R])
	if !ok {
		panic(fmt.Sprintf("desc: rt installed no launcher of type %T (it has %T)", l, launcher))
	}
	return l
}

// ImageLauncher is the rest of rt's launch path for kernel specs whose
// fields are images and samplers: K, I and S are *rt.Kernel, rt.Image and
// rt.Sampler. Like Launcher, rt installs it from init and rt/codegen takes
// it once (ImageLauncherOf).
type ImageLauncher[K, I, S any] struct {
	// Image sets argument i, an image parameter of the OpenCL C image type
	// kind ("image2d_t", ...) with the access qualifier access, to img.
	Image func(k K, i int, img I, kind, access string)
	// Sampler sets argument i, a sampler_t, to s.
	Sampler func(k K, i int, s S)
}

// imageLauncher holds the one *ImageLauncher that rt installs.
var imageLauncher any

// SetImageLauncher installs rt's launch path for images and samplers. rt
// calls it once, from init.
func SetImageLauncher[K, I, S any](l *ImageLauncher[K, I, S]) { imageLauncher = l }

// ImageLauncherOf returns the image launch path that rt installed.
func ImageLauncherOf[K, I, S any]() *ImageLauncher[K, I, S] {
	l, ok := imageLauncher.(*ImageLauncher[K, I, S])
	if !ok {
		panic(fmt.Sprintf("desc: rt installed no image launcher of type %T (it has %T)", l, imageLauncher))
	}
	return l
}

// ScalarBits returns the bytes of v, of at most 8, as a uint64 in the
// machine's byte order. Numbers are read at their own width: a narrow
// store into a wider word that is then read back whole stalls the
// processor's store forwarding, on every argument of every launch.
func ScalarBits[T any](v T) uint64 {
	p, size := unsafe.Pointer(&v), unsafe.Sizeof(v)
	var bits uint64
	switch size {
	case 1:
		bits = uint64(*(*uint8)(p))
	case 2:
		bits = uint64(*(*uint16)(p))
	case 4:
		bits = uint64(*(*uint32)(p))
	case 8:
		return *(*uint64)(p)
	default:
		*(*T)(unsafe.Pointer(&bits)) = v
		return bits
	}
	if bigEndian { // move the number to the word's first bytes in memory
		bits <<= 64 - 8*size
	}
	return bits
}
