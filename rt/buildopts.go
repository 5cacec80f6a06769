package rt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// The origins of build options, for checkOptions' errors.
const (
	optionsFromEnv    = "the environment (DGEN_PROGRAM_COMPILE_OPTIONS)"
	optionsFromConfig = "the API (CacheConfig.CompileOptions)"
	optionsFromAPI    = "the API (the options of BuildProgram, LoadProgram or ProgramImage)"
)

// clStandards are the values -cl-std= accepts.
var clStandards = []string{"CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"}

// checkOptions checks build options before they reach the driver, which may
// crash on malformed ones (PoCL aborts inside clBuildProgram on a bare -D).
// Options are separated by white space; -D and -I take a value, attached
// or as the next option; -cl-std= names a standard. Other options start with
// a dash and pass unchecked, vendor options among them. An invalid option
// is an error wrapping ErrBuildFailed that says where it came from.
func checkOptions(opts, from string) error {
	f := strings.Fields(opts)
	for i := 0; i < len(f); i++ {
		tok := f[i]
		var msg string
		switch {
		case tok == "-D" || tok == "-I":
			if i+1 == len(f) || strings.HasPrefix(f[i+1], "-") {
				msg = tok + " needs a value"
				break
			}
			i++
			if tok == "-D" {
				msg = checkDefine(f[i])
			}
		case strings.HasPrefix(tok, "-D"):
			msg = checkDefine(tok[2:])
		case strings.HasPrefix(tok, "-cl-std="):
			if v := tok[len("-cl-std="):]; !slices.Contains(clStandards, v) {
				msg = fmt.Sprintf("unknown OpenCL C standard %q (want one of %s)", v, strings.Join(clStandards, ", "))
			}
		case !strings.HasPrefix(tok, "-") || tok == "-":
			msg = "not an option"
		}
		if msg != "" {
			return fmt.Errorf("%w: build options from %s: %q: %s", ErrBuildFailed, from, tok, msg)
		}
	}
	return nil
}

// checkDefine checks the value of -D: a macro name, optionally =value.
func checkDefine(def string) string {
	name, _, _ := strings.Cut(def, "=")
	if name == "" {
		return "-D needs a macro name"
	}
	for i, r := range name {
		if !identChar(r, i > 0) {
			return fmt.Sprintf("%q is not a macro name", name)
		}
	}
	return ""
}

// checkImageOptions checks an image's own options, naming their origin.
func checkImageOptions(img *progcache.Image) error {
	from := img.Origin
	if from == "" {
		from = optionsFromAPI
	}
	return checkOptions(img.Options, from)
}
