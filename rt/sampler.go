package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Sampler says how a kernel's read_imagef (and friends) reads an image:
// with coordinates normalized to [0, 1] or in pixels, what it returns
// outside the image, and how it filters. It is a value: a kernel spec's
// sampler_t field takes one, and the context makes the driver's sampler
// object on first use and keeps it until Close.
//
// Address is ClampToEdge (the zero AddressMode), Clamp, AddressNone,
// Repeat or MirroredRepeat (the last two need Normalized), and Filter
// Nearest (the zero FilterMode) or Linear. A sampler declared as a
// constant in the kernel source needs no field at all.
type Sampler = core.Sampler
