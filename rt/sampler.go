package rt

// Sampler says how a kernel's read_imagef (and friends) reads an image:
// with coordinates normalized to [0, 1] or in pixels, what it returns
// outside the image, and how it filters. It is a value: a kernel spec's
// sampler_t field takes one, and the context makes the driver's sampler
// object on first use and keeps it until Close. A sampler declared as a
// constant in the kernel source needs no field at all.
type Sampler struct {
	// Normalized says that coordinates run from 0 to 1 across the image,
	// rather than in pixels.
	Normalized bool
	// Address is what the sampler returns outside the image: ClampToEdge
	// (the zero AddressMode), Clamp, AddressNone, Repeat or MirroredRepeat
	// (the last two need Normalized).
	Address AddressMode
	// Filter is Nearest (the zero FilterMode) or Linear.
	Filter FilterMode
}
