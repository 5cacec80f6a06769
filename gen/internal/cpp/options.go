package cpp

import (
	"fmt"
	"slices"
	"strings"
)

// OpenCL returns the macros that an OpenCL C 1.2 compiler predefines for a
// little-endian device with image support and the extensions that every
// device dgen targets has (PoCL's CPU device and NVIDIA's GPUs): what the
// device's compiler will see when it builds the image.
func OpenCL() []Define {
	defs := []Define{
		{Name: "__OPENCL_VERSION__", Value: "120"},
		{Name: "__OPENCL_C_VERSION__", Value: "120"},
		{Name: "CL_VERSION_1_0", Value: "100"},
		{Name: "CL_VERSION_1_1", Value: "110"},
		{Name: "CL_VERSION_1_2", Value: "120"},
		{Name: "__ENDIAN_LITTLE__", Value: "1"},
		{Name: "__IMAGE_SUPPORT__", Value: "1"},
		{Name: "__STDC__", Value: "1"},
		{Name: "__STDC_VERSION__", Value: "199901L"},
		{Name: "__OPENCL_C__", Value: "1"},
		{Name: "FP_FAST_FMAF", Value: "1"},
	}
	for _, ext := range Extensions {
		defs = append(defs, Define{Name: ext, Value: "1", Extension: true})
	}
	return defs
}

// Extensions are the extension macros that [OpenCL] defines, as clang
// does for a target it does not know (SPIR): every standard one, so that
// a kernel behind "#if defined(cl_khr_fp16)" is read. The kernels that
// such a guard keeps are listed in [Result.Guards], for the runtime to
// refuse a launch on a device that lacks the extension.
var Extensions = []string{
	"cl_khr_byte_addressable_store", "cl_khr_fp16", "cl_khr_fp64",
	"cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
	"cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
	"cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics",
	"cl_khr_3d_image_writes", "cl_khr_depth_images", "cl_khr_gl_msaa_sharing",
	"cl_khr_mipmap_image", "cl_khr_mipmap_image_writes", "cl_khr_srgb_image_writes",
	"cl_khr_subgroups", "cl_khr_integer_dot_product",
	"cl_amd_media_ops", "cl_amd_media_ops2",
	"cl_intel_subgroups", "cl_intel_subgroups_short",
}

// ParseOptions reads the preprocessor's options out of an OpenCL build
// options string: -D NAME, -D NAME=VALUE, -U NAME and -I DIR, attached or
// separate, with single or double quotes and backslashes as a shell has
// them. Other options are ignored; -cl-fast-relaxed-math defines
// __FAST_RELAXED_MATH__, as the compiler does.
func ParseOptions(options string) (defs []Define, dirs []string, err error) {
	words, err := splitWords(options)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if err := checkWord(w); err != nil {
			return nil, nil, err
		}
		flag := ""
		for _, f := range []string{"-D", "-U", "-I"} {
			if strings.HasPrefix(w, f) {
				flag = f
			}
		}
		if w == "-cl-fast-relaxed-math" {
			defs = append(defs, Define{Name: "__FAST_RELAXED_MATH__", Value: "1"})
		}
		if flag == "" {
			continue
		}
		arg := w[2:]
		if arg == "" {
			if i+1 >= len(words) || strings.HasPrefix(words[i+1], "-") {
				return nil, nil, fmt.Errorf("option %s needs an argument", flag)
			}
			i++
			arg = words[i]
		}
		if flag != "-I" {
			if err := checkMacroName(flag, arg); err != nil {
				return nil, nil, err
			}
		}
		switch flag {
		case "-I":
			dirs = append(dirs, arg)
		case "-U":
			defs = append(defs, Define{Name: arg, Undef: true})
		default:
			name, value, ok := strings.Cut(arg, "=")
			if !ok {
				value = "1"
			}
			defs = append(defs, Define{Name: name, Value: value})
		}
	}
	return defs, dirs, nil
}

// clStandards are the values of -cl-std= that the runtime accepts (rt's
// checkOptions, whose rules these are, so that a program's options are
// refused at generate time, not at its first build).
var clStandards = []string{"CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"}

// checkWord checks one word of the options that is not the argument of a
// separate -D, -U or -I.
func checkWord(w string) error {
	switch {
	case !strings.HasPrefix(w, "-") || w == "-":
		return fmt.Errorf("%q is not an option (options start with -)", w)
	case strings.HasPrefix(w, "-cl-std="):
		if v := w[len("-cl-std="):]; !slices.Contains(clStandards, v) {
			return fmt.Errorf("-cl-std=%s: unknown OpenCL C standard %q (want one of %s)", v, v, strings.Join(clStandards, ", "))
		}
	case w == "-cl-std":
		return fmt.Errorf("-cl-std needs =VERSION (one of %s)", strings.Join(clStandards, ", "))
	}
	return nil
}

// checkMacroName checks the argument of -D or -U: a macro name, for -D
// optionally followed by =value or a parameter list.
func checkMacroName(flag, arg string) error {
	name, _, _ := strings.Cut(arg, "=")
	if flag == "-D" {
		name, _, _ = strings.Cut(name, "(")
	}
	if name == "" {
		return fmt.Errorf("option %s needs a macro name", flag)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLetter(c) && (i == 0 || !isDigit(c)) {
			return fmt.Errorf("option %s%s: %q is not a macro name", flag, arg, name)
		}
	}
	return nil
}

// splitWords splits s as a POSIX shell splits words.
func splitWords(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
		case quote == '"':
			if c == '"' {
				quote = 0
				continue
			}
			if c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
				i++
				c = s[i]
			}
		case c == '\'' || c == '"':
			quote, in = c, true
			continue
		case c == '\\' && i+1 < len(s):
			i++
			c = s[i]
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
			continue
		}
		b.WriteByte(c)
		in = true
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in options %q", quote, s)
	}
	if in {
		words = append(words, b.String())
	}
	return words, nil
}
