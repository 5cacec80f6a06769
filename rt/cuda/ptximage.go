package cuda

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// The rewrite of images and samplers. NVIDIA's OpenCL compiles in the
// independent texture mode: an image parameter is a .texref (read_only)
// or a .surfref (write_only, read_write), a sampler a .samplerref
// parameter or a module-scope .samplerref constant, and the instructions
// name them: `tex.2d.v4.f32.s32 d, [img, smp, {x, y}]`,
// `sust.p.2d.v4.b32.trap [img, {x, y}], v`, `txq.width.b32 r, [img]`,
// `suq.channel_order.b32 r, [img]`. CUDA's driver API runs the unified
// mode, in which an instruction takes a texture or surface object, a .u64
// that holds image and sampler state together. So:
//
//   - every image and sampler parameter becomes a .u64: an image's holds
//     its texture object (.texref) or surface object (.surfref), which
//     txq/suq/suld/sust read; a sampler's is never read;
//   - each (image, sampler) pair that a tex or tld4 reads becomes a hidden
//     .u64 parameter that holds the texture object of the image with that
//     sampler's state; a sampler constant of the source is baked into the
//     pair's description (Hidden.Const);
//   - a query of the channel order or data type, which OpenCL's codes
//     answer (the compiled code swizzles and converts by them), or of an
//     array's layers, becomes a load of a hidden .u32 parameter;
//   - a tex of integer coordinates reads float ones (floatCoords), and
//     the alpha of an image without one is 1 (alphaOne);
//   - anything else that names an image or sampler (a sampler query, an
//     image1d_buffer_t, an image passed to a function that is not
//     inlined) refuses the kernel.

// Object is what an image or sampler parameter holds after the rewrite.
type Object uint8

// The objects.
const (
	ObjTexture Object = iota + 1 // a read-only image: its texture object
	ObjSurface                   // a writable image: its surface object
	ObjSampler                   // a sampler: nothing the kernel reads
)

var objectOf = map[string]Object{"texref": ObjTexture, "surfref": ObjSurface, "samplerref": ObjSampler}

// HiddenKind is what a hidden parameter holds.
type HiddenKind uint8

// The hidden parameters.
const (
	HiddenTexture HiddenKind = iota + 1 // the texture object of an (image, sampler) pair
	HiddenOrder                         // an image's OpenCL channel order code
	HiddenType                          // an image's OpenCL channel data type code
	HiddenLayers                        // an image array's number of layers
)

var hiddenNames = map[HiddenKind]string{HiddenTexture: "texture", HiddenOrder: "order", HiddenType: "type", HiddenLayers: "layers"}

// Hidden is a parameter that the rewrite adds to a kernel.
type Hidden struct {
	Kind HiddenKind
	// Image is the index of the image parameter.
	Image int
	// Sampler is the index of the sampler parameter of a HiddenTexture,
	// or -1 when the sampler is Const.
	Sampler int
	// Const is the sampler of a HiddenTexture whose sampler is a constant
	// of the source.
	Const driver.SamplerDesc
}

// hiddenInfix marks the name of a hidden parameter: kernel_dgen_hN.
const hiddenInfix = "_dgen_h"

// decl returns the hidden parameter's declaration, with a comment that
// describes it (parseHidden reads it back).
func (h Hidden) decl(kernel string, i int) string {
	typ, desc := ".u32", fmt.Sprintf("%s %d", hiddenNames[h.Kind], h.Image)
	if h.Kind == HiddenTexture {
		typ = ".u64"
		if h.Sampler >= 0 {
			desc += fmt.Sprintf(" %d", h.Sampler)
		} else {
			desc += fmt.Sprintf(" const %t %s %s", h.Const.Normalized, h.Const.Address, h.Const.Filter)
		}
	}
	return fmt.Sprintf("%s %s%s%d // dgen %s", typ, kernel, hiddenInfix, i, desc)
}

// parseHidden reads a hidden parameter back from its comment.
func parseHidden(kernel, comment string) (Hidden, error) {
	f := strings.Fields(comment)
	bad := fmt.Errorf("rewrite PTX: %w: kernel %s: hidden parameter %q not understood", driver.ErrInvalidBinary, kernel, comment)
	if len(f) < 3 || f[0] != "dgen" {
		return Hidden{}, bad
	}
	var h Hidden
	for k, n := range hiddenNames {
		if n == f[1] {
			h.Kind = k
		}
	}
	var err error
	if h.Image, err = strconv.Atoi(f[2]); err != nil || h.Kind == 0 {
		return Hidden{}, bad
	}
	switch {
	case h.Kind != HiddenTexture && len(f) == 3:
	case h.Kind == HiddenTexture && len(f) == 4:
		if h.Sampler, err = strconv.Atoi(f[3]); err != nil {
			return Hidden{}, bad
		}
	case h.Kind == HiddenTexture && len(f) == 7 && f[3] == "const":
		h.Sampler, h.Const = -1, driver.SamplerDesc{Normalized: f[4] == "true", Address: f[5], Filter: f[6]}
	default:
		return Hidden{}, bad
	}
	return h, nil
}

// objectParam is an image or sampler parameter: a .u64 whose comment
// says what it was.
func objectParam(kind, decl string) (Param, string, string, bool, error) {
	f := strings.Fields(decl)
	return Param{Size: 8, Align: 8, Object: objectOf[kind]}, ".u64 " + f[len(f)-1], " // ." + kind, false, nil
}

// samplerConst is a module-scope sampler constant: its state, or why
// CUDA cannot sample with it.
type samplerConst struct {
	desc driver.SamplerDesc
	bad  string
}

// samplerAddress maps the addressing modes of a .samplerref initializer
// to OpenCL's. NVIDIA's OpenCL writes CLK_ADDRESS_NONE as wrap, as it
// writes CLK_ADDRESS_REPEAT (and the sampler of a read without one).
var samplerAddress = map[string]string{"wrap": "repeat", "mirror": "mirrored_repeat", "clamp_to_edge": "clamp_to_edge", "clamp_to_border": "clamp"}

// parseSampler reads a .samplerref initializer: "{ addr_mode_0 = wrap,
// filter_mode = nearest, force_unnormalized_coords = 1 }".
func parseSampler(name, init string) samplerConst {
	s := samplerConst{desc: driver.SamplerDesc{Normalized: true, Address: "repeat", Filter: "nearest"}}
	init = strings.Trim(strings.TrimSpace(init), "{};")
	for _, kv := range strings.Split(init, ",") {
		k, v, _ := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "filter_mode" && (v == "nearest" || v == "linear"):
			s.desc.Filter = v
		case k == "force_unnormalized_coords":
			s.desc.Normalized = v == "0"
		case strings.HasPrefix(k, "addr_mode_") && samplerAddress[v] != "":
			s.desc.Address = samplerAddress[v]
		case k != "":
			s.bad = fmt.Sprintf("the sampler %s (%s = %s)", name, k, v)
		}
	}
	if !s.desc.Normalized && (s.desc.Address == "repeat" || s.desc.Address == "mirrored_repeat") {
		// CLK_ADDRESS_NONE, or REPEAT, which OpenCL C defines only with
		// normalized coordinates: in range both read as clamp_to_edge
		// does, and out of range OpenCL leaves the result undefined.
		s.desc.Address = "clamp_to_edge"
	}
	return s
}

var (
	imageOpRe = regexp.MustCompile(`^\s*(?:@!?%\w+\s+)?(tex|tld4|txq|suq|suld|sust|sured)\.([\w.]+)\s`)
	callRe    = regexp.MustCompile(`\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([\w$]+)`)
)

// objReg is the register that holds an image's object for one
// instruction, declared at the top of a kernel with images.
const objReg = "\t.reg .b64 \t%dgen_obj; .reg .b32 \t%dgen_a; .reg .pred \t%dgen_p; .reg .f32 \t%dgen_c<4>;"

// objLoad loads an object into objReg.
const objLoad = "ld.param.u64 \t%dgen_obj,"

// image rewrites an image instruction of an entry for unified mode.
func (r *rewriter) image(l string) ([]string, error) {
	m := imageOpRe.FindStringSubmatch(l)
	op, mods := m[1], m[2]
	if r.entry == nil {
		return nil, &UnsupportedError{Kernel: r.fn, Construct: "an image instruction (" + op + ") in a function that is not a kernel"}
	}
	if strings.Contains(mods, "1d_buffer") {
		return nil, errBuffer1D(r.fn)
	}
	open, end := strings.Index(l, "["), strings.LastIndex(l, "]")
	if open < 0 || end < open {
		return nil, &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("the image instruction %q", strings.TrimSpace(l))}
	}
	inner := l[open+1 : end]
	head, coords, hasCoords := strings.Cut(inner, "{")
	var names []string
	for _, n := range strings.Split(head, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) > 0 && names[0] == "%dgen_obj" {
		return []string{l}, nil // rewritten PTX read again
	}
	img, ok := 0, false
	if len(names) > 0 {
		img, ok = r.objects[names[0]]
	}
	if !ok {
		return nil, &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("the image instruction %q on something other than an image parameter", strings.TrimSpace(l))}
	}
	want := ObjSurface
	if op == "tex" || op == "tld4" || op == "txq" {
		want = ObjTexture
	}
	if r.entry.Params[img].Object != want {
		return nil, &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("the image instruction %q on a parameter that is not a %s", strings.TrimSpace(l), map[Object]string{ObjTexture: "read-only image", ObjSurface: "writable image"}[want])}
	}
	rest := ""
	if hasCoords {
		rest = ", {" + coords
	}
	with := func(src string) []string {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		return []string{fmt.Sprintf("%s%s [%s];", indent, objLoad, src), l[:open+1] + "%dgen_obj" + rest + l[end:]}
	}
	switch {
	case op == "tex" || op == "tld4":
		h, err := r.pair(img, names[1:])
		if err != nil {
			return nil, err
		}
		out := with(fmt.Sprintf("%s%s%d", r.fn, hiddenInfix, h))
		if op == "tex" && strings.HasSuffix(mods, ".s32") {
			out = append(out[:1], floatCoords(out[1], mods)...)
		}
		return r.alphaOne(out, l[len(m[0]):open], mods, img), nil
	case hiddenQuery[strings.Split(mods, ".")[0]] != 0:
		kind := hiddenQuery[strings.Split(mods, ".")[0]]
		h := r.hidden(Hidden{Kind: kind, Image: img, Sampler: -1})
		dst := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l[len(m[0]):open]), ","))
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		return []string{fmt.Sprintf("%sld.param.u32 \t%s, [%s%s%d];", indent, dst, r.fn, hiddenInfix, h)}, nil
	case op == "txq" || op == "suq":
		if !imageQuery[strings.Split(mods, ".")[0]] {
			return nil, &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("the query %s.%s", op, mods)}
		}
	}
	return with(names[0]), nil
}

// imageQuery are the queries of txq and suq that an object answers as
// OpenCL's image does; hiddenQuery those that a hidden parameter answers
// (a texture object of an array does not load with txq.array_size: the
// kernel is not found in the module).
var (
	imageQuery  = map[string]bool{"width": true, "height": true, "depth": true}
	hiddenQuery = map[string]HiddenKind{"channel_order": HiddenOrder, "channel_data_type": HiddenType, "array_size": HiddenLayers}
)

// pair returns the index of the hidden texture object of image parameter
// img with the sampler that names (one name, or none) give.
func (r *rewriter) pair(img int, names []string) (int, error) {
	h := Hidden{Kind: HiddenTexture, Image: img, Sampler: -1, Const: driver.SamplerDesc{Address: "clamp_to_edge", Filter: "nearest"}}
	if len(names) > 1 {
		return 0, &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("a texture instruction with operands %v", names)}
	}
	if len(names) == 1 {
		if i, ok := r.objects[names[0]]; ok && r.entry.Params[i].Object == ObjSampler {
			h.Sampler = i
		} else if s, ok := r.samplers[names[0]]; ok {
			if s.bad != "" {
				return 0, &UnsupportedError{Kernel: r.fn, Construct: s.bad}
			}
			h.Const = s.desc
		} else {
			return 0, &UnsupportedError{Kernel: r.fn, Construct: "the sampler " + names[0] + ", which is not a parameter or constant"}
		}
	}
	if h.Sampler >= 0 {
		h.Const = driver.SamplerDesc{}
	}
	return r.hidden(h), nil
}

// hidden returns the index of h among the entry's hidden parameters,
// adding it if it is new.
func (r *rewriter) hidden(h Hidden) int {
	for i, o := range r.entry.Hidden {
		if o == h {
			return i
		}
	}
	r.entry.Hidden = append(r.entry.Hidden, h)
	return len(r.entry.Hidden) - 1
}

// leftObjects refuses a line that still names an image or sampler
// parameter once its instruction is rewritten: the kernel uses one as a
// value, which unified mode has no meaning for.
func (r *rewriter) leftObjects(lines []string) error {
	if len(r.objects) == 0 {
		return nil
	}
	l := lines[len(lines)-1] // the instruction; a load before it reads the parameter
	code, _, _ := strings.Cut(l, "//")
	if strings.HasPrefix(strings.TrimSpace(code), objLoad) {
		return nil // the load of a rewritten instruction (rewritten PTX read again)
	}
	for name, i := range r.objects {
		if strings.Contains(code, name) && wordRe(name).MatchString(code) {
			return &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("its %s parameter %d other than in an image instruction (%q)", map[Object]string{ObjTexture: "image", ObjSurface: "image", ObjSampler: "sampler"}[r.entry.Params[i].Object], i, strings.TrimSpace(l))}
		}
	}
	return nil
}

// floatCoords rewrites a tex of integer coordinates (the last line of
// tex, whose instruction modifiers are mods) to one of float coordinates,
// converted before it: a texture object samples integer coordinates
// without its addressing mode (as if every mode were clamp), where the
// independent mode's sampler addresses them. With the nearest filter and
// unnormalized coordinates, which OpenCL C requires of integer
// coordinates, the float coordinate i reads the texel i. The layer of an
// array kind stays an integer.
func floatCoords(tex, mods string) []string {
	open := strings.Index(tex, "[%dgen_obj")
	cs := strings.Index(tex[open:], "{") + open
	end := strings.Index(tex[cs:], "}") + cs
	elems := strings.Split(tex[cs+1:end], ",")
	indent := tex[:len(tex)-len(strings.TrimLeft(tex, " \t"))]
	var out []string
	first := 0
	if strings.HasPrefix(mods, "a1d") || strings.HasPrefix(mods, "a2d") {
		first = 1
	}
	for i := first; i < min(len(elems), 4); i++ {
		e := strings.TrimSpace(elems[i])
		c := fmt.Sprintf("%%dgen_c%d", i)
		if strings.HasPrefix(e, "%") {
			out = append(out, fmt.Sprintf("%scvt.rn.f32.s32 \t%s, %s;", indent, c, e))
		} else {
			v, _ := strconv.ParseInt(e, 0, 32)
			out = append(out, fmt.Sprintf("%smov.f32 \t%s, 0f%08X;", indent, c, math.Float32bits(float32(v))))
		}
		elems[i] = c
	}
	mods = strings.TrimSuffix(mods, ".s32") + ".f32"
	tex = strings.Replace(tex[:cs], "."+strings.TrimSuffix(mods, ".f32")+".s32", "."+mods, 1) + "{" + strings.Join(elems, ", ") + tex[end:]
	return append(out, tex)
}

// alphaOne adds to the lines of a tex the alpha of OpenCL's channel
// orders without one: a texture object of one or two channels reads 0 as
// the fourth component, where OpenCL reads 1. dst is the text between
// the instruction and its address (the destination vector), mods the
// instruction modifiers; img the image parameter.
func (r *rewriter) alphaOne(out []string, dst, mods string, img int) []string {
	dst = strings.Trim(strings.TrimSpace(dst), ",")
	dst = strings.Trim(strings.TrimSpace(dst), "{}")
	elems := strings.Split(dst, ",")
	if len(elems) != 4 {
		return out
	}
	w := strings.TrimSpace(elems[3])
	one := "1"
	if strings.Contains(mods, ".f32.") {
		one = "0x3F800000"
	}
	h := r.hidden(Hidden{Kind: HiddenOrder, Image: img, Sampler: -1})
	tex := out[len(out)-1]
	indent := tex[:len(tex)-len(strings.TrimLeft(tex, " \t"))]
	return append(out,
		fmt.Sprintf("%sld.param.u32 \t%%dgen_a, [%s%s%d];", indent, r.fn, hiddenInfix, h),
		fmt.Sprintf("%ssetp.eq.u32 \t%%dgen_p, %%dgen_a, %d;", indent, channelOrderRGBA),
		fmt.Sprintf("%sselp.b32 \t%s, %s, %s, %%dgen_p;", indent, w, w, one))
}

// channelOrderRGBA is OpenCL's code of the order RGBA.
const channelOrderRGBA = 0x10B5

// errBuffer1D refuses a kernel that takes an image1d_buffer_t.
func errBuffer1D(kernel string) error {
	return &UnsupportedError{Kernel: kernel, Construct: "an image1d_buffer_t"}
}

// usesBuffer1D reports whether the body of the function that starts after
// lines[i] writes or queries an image1d_buffer_t, which NVIDIA's OpenCL
// passes as a pointer that the body loads before it names the kind.
func usesBuffer1D(lines []string, i int) bool {
	for _, l := range lines[i+1:] {
		if strings.Contains(l, ".1d_buffer") {
			return true
		}
		if strings.HasPrefix(l, "}") {
			return false
		}
	}
	return false
}
