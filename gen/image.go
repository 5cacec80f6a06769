package gen

import (
	"fmt"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dgen-go/dgen/gen/internal/clsrc"
)

// Images and samplers in kernel specs: the OpenCL C image types bind
// rt.Image, with the parameter's type and access qualifier, which rt
// checks against the image's ImageDesc when the argument is set, and
// sampler_t binds rt.Sampler. A sampler declared as a constant in the
// source is no parameter and needs nothing.

// imageTypes are the OpenCL C image types.
var imageTypes = map[string]bool{
	"image1d_t": true, "image1d_buffer_t": true, "image1d_array_t": true,
	"image2d_t": true, "image2d_array_t": true, "image3d_t": true,
}

// imageParam is what emit needs of an image or sampler parameter: the
// access qualifier of an image ("read_only", ...), or "" for a sampler.
type imageParam struct {
	access string
}

// isImageHandle reports whether t is rt's image handle type, which an
// allocation site may hand out.
func isImageHandle(t types.Type) bool { return isRT(t, "Image") }

// accessQualifier returns the access qualifier of an image parameter as
// written (after preprocessing); an image parameter without one is
// read_only, as OpenCL C says.
func accessQualifier(text string) string {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '*' || r == '(' || r == ')' }) {
		switch w {
		case "__read_only", "read_only":
			return "read_only"
		case "__write_only", "write_only":
			return "write_only"
		case "__read_write", "read_write":
			return "read_write"
		}
	}
	return "read_only"
}

// checkImageField matches field i of a kernel spec with an image or
// sampler parameter. handled is false when the parameter is neither, and
// ok reports a match.
func (s *state) checkImageField(k *kernel, b *binding, f *types.Var, pos token.Pos, i int, param clsrc.KernelParam) (fd field, handled, ok bool) {
	t := param.Type
	if t == nil || t.Kind != clsrc.Opaque {
		return field{}, false, false
	}
	isImage, rtName := imageTypes[t.Name], "Image"
	switch {
	case isImage:
	case t.Name == "sampler_t":
		rtName = "Sampler"
	default:
		return field{}, false, false
	}
	if !isRT(f.Type(), rtName) {
		s.errorf(pos, "kernel spec %s: field %s has type %s but parameter %d (%s) of %s needs rt.%s", k.name, f.Name(), typeString(f.Type(), s.l.path), i, param.Text, k.clName, rtName)
		return field{}, true, false
	}
	fd = field{name: f.Name(), class: clsrc.ArgValue, cl: t.Name, elem: f.Type(), img: &imageParam{}}
	if isImage {
		fd.img.access = accessQualifier(param.Text)
		if fd.img.access == "read_write" && b.rwGuard == "" {
			b.rwGuard = readWriteGuard(s.imageName(b.prog, param.Pos.Filename), param.Pos.Line, fmt.Sprintf("%s of kernel %s", param.Name, k.clName))
		}
	}
	return fd, true, true
}

// readWriteGuard returns the lines that dgen appends to the device image
// of a program whose kernels take read_write images: a compiler without
// them (OpenCL C before 2.0, or 3.0 without __opencl_c_read_write_images)
// stops the build with an error that says so, where it would otherwise
// report a syntax error in the kernel's parameters.
//
// A #line directive puts the error at the parameter in the user's source.
func readWriteGuard(file string, line int, param string) string {
	return fmt.Sprintf("\n#line %d %s\n#if __OPENCL_C_VERSION__ < 200 || (__OPENCL_C_VERSION__ >= 300 && !defined(__opencl_c_read_write_images))\n"+
		"#error \"dgen: parameter %s is a read_write image, which needs OpenCL C 2.0 or later with read_write images: build with -cl-std=CL2.0 or CL3.0 on a device that has them\"\n#endif\n",
		line-1, strconv.Quote(file), param)
}

// imageArg returns the call that sets argument i, an image or sampler
// field f, of the kernel k; nil for another field.
func imageArg(i int, f field) jen.Code {
	switch {
	case f.img == nil:
		return nil
	case f.img.access == "":
		return jen.Qual(CodegenPath, "SetSampler").Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name))
	}
	return jen.Qual(CodegenPath, "SetImage").Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name), jen.Lit(f.cl), jen.Lit(f.img.access))
}
