package progcache

import "sync/atomic"

// SpecValue is the value of one specialization constant: the macro Name
// defined to Value (-D Name=Value) at build.
type SpecValue struct {
	Name  string
	Value string
}

// Image is a device image: the one descriptor of a program that the cache
// builds. Registration of a //dgen:program declaration makes one; so does
// rt's BuildProgram for source it is given. Its fields must not change
// once it has been used.
type Image struct {
	// ID is the image's unique id, "<import path>.<Name>".
	ID string
	// Name is a readable name for errors and cache listings; empty means ID.
	Name string
	// Source is the kernel source that is built.
	Source string
	// SourceHash is the xxhash64 of Source; 0 means it is computed.
	SourceHash uint64
	// Options are the program's own build options.
	Options string
	// Origin says where Options came from, for the owner's errors: a
	// //dgen:program directive, or (empty) the API.
	Origin string
	// SpecConsts are the specialization constants the image uses, with
	// their default values, sorted by name; the cache's values (SetSpec)
	// override the defaults. Nil means every value set on the cache applies.
	SpecConsts []SpecValue
}

// KernelKey names a kernel of an image: the one descriptor of a kernel
// that the cache hands out. Its dense index makes a cache hit an array
// lookup.
type KernelKey struct {
	image *Image
	name  string
	index int
}

var kernelKeys atomic.Int32

// NewKernelKey returns the key of the kernel called name in img. Each call
// takes a new index: call it once per kernel, at registration.
func NewKernelKey(img *Image, name string) *KernelKey {
	return &KernelKey{image: img, name: name, index: int(kernelKeys.Add(1) - 1)}
}

// Name returns the kernel's name.
func (k *KernelKey) Name() string { return k.name }

// Image returns the image that defines the kernel.
func (k *KernelKey) Image() *Image { return k.image }
