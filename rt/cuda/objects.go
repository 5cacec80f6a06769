//go:build cgo

package cuda

import (
	"fmt"

	"github.com/dgen-go/dgen/rt/driver"
)

// The image and sampler arguments of a kernel. An image parameter's slot
// holds the image's texture object (a read-only image) or surface object;
// a sampler's slot holds its state, which no instruction reads. Before a
// launch after either changed, the hidden parameters are set: the texture
// object of each (image, sampler) pair that the kernel samples with, from
// the image's cache, and the channel codes it queries.

// objectError is the error of an image or sampler argument that does not
// fit its parameter.
func (k *kernel) objectError(i int, what string) error {
	return &driver.Error{Call: "set kernel argument", Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (argument %d of kernel %s: %s)", i, k.name, what)}
}

// setImageHandle sets argument i to the image whose handle is h.
func (k *kernel) setImageHandle(i int, h uint64) error {
	v, ok := liveImages.Load(h)
	if !ok {
		return k.objectError(i, "not a live image")
	}
	return k.setImage(i, v.(*image))
}

// setImage sets image parameter i to m.
func (k *kernel) setImage(i int, m *image) error {
	if err := k.check(i, 8, false); err != nil {
		return err
	}
	obj := m.surf
	switch k.entry.Params[i].Object {
	case ObjTexture:
		obj = m.tex
	case ObjSampler:
		return k.objectError(i, "an image passed to a sampler parameter")
	case 0:
		return k.objectError(i, "an image passed to a parameter that is not one")
	}
	if k.imgs == nil {
		k.imgs = make([]*image, len(k.entry.Params))
	}
	k.imgs[i], k.objDirty = m, true
	*(*uint64)(k.slot(i)) = uint64(obj)
	k.mark(i)
	return nil
}

// SetArgSampler implements driver.SamplerKernel.
func (k *kernel) SetArgSampler(i int, s driver.Sampler) error {
	ss, ok := s.(sampler)
	if !ok {
		return fmt.Errorf("set kernel argument: sampler of another backend (%T)", s)
	}
	return k.setSampler(i, ss)
}

// setSampler sets sampler parameter i to s.
func (k *kernel) setSampler(i int, s sampler) error {
	if err := k.check(i, 8, false); err != nil {
		return err
	}
	if k.entry.Params[i].Object != ObjSampler {
		return k.objectError(i, "a sampler passed to a parameter that is not one")
	}
	if k.smps == nil {
		k.smps = make([]sampler, len(k.entry.Params))
	}
	k.smps[i], k.objDirty = s, true
	*(*uint64)(k.slot(i)) = uint64(s)
	k.mark(i)
	return nil
}

// bindObjects sets the hidden parameters from the image and sampler
// arguments.
func (k *kernel) bindObjects() error {
	n := len(k.entry.Params)
	for j, h := range k.entry.Hidden {
		var m *image
		if h.Image < len(k.imgs) {
			m = k.imgs[h.Image]
		}
		if m == nil {
			return k.objectError(h.Image, "no image set")
		}
		slot := k.slot(n + j)
		switch h.Kind {
		case HiddenOrder:
			*(*uint32)(slot) = m.format.order
		case HiddenType:
			*(*uint32)(slot) = m.format.typ.code
		case HiddenLayers:
			*(*uint32)(slot) = uint32(m.desc.Layers)
		case HiddenTexture:
			s := sampler(0).with(h.Const)
			if h.Sampler >= 0 {
				if h.Sampler >= len(k.smps) {
					return k.objectError(h.Sampler, "no sampler set")
				}
				s = k.smps[h.Sampler]
			}
			t, err := m.texture(s)
			if err != nil {
				return fmt.Errorf("kernel %s, image argument %d: %w", k.name, h.Image, err)
			}
			*(*uint64)(slot) = uint64(t)
		}
	}
	k.objDirty = false
	return nil
}
