package gen

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen/internal/clsrc"
	"github.com/dgen-go/dgen/gen/internal/cpp"
)

// The model of a package: its marked declarations, filled in by collect
// and completed by the checks, then read by emit.

// decl is a declaration that carries a directive.
type decl struct {
	name string
	file *srcFile
	pos  token.Pos
	dir  *annotations.Directive
	spec *ast.ValueSpec // for vars
	ts   *ast.TypeSpec  // for kernel specs
}

// program is a //dgen:program variable and what the front end made of its
// source.
type program struct {
	decl
	source, options string
	clPath          string
	pp              *cpp.Result                    // the preprocessed source
	unit            *clsrc.Unit                    // its declarations
	image           string                         // the device image
	table           []*global                      // the globals the image uses
	kernels         map[string]clsrc.KernelGlobals // hidden arguments by kernel
	readWriteImages []string                       // kernel parameters that are read_write images (image.go)
	absolute        map[string]bool                // the headers named by their absolute paths (imageName)
}

// field is a field of a kernel spec, bound to a kernel parameter.
type field struct {
	name  string
	class clsrc.ArgClass
	elem  types.Type // buffer or local element, or the value type
	out   bool
	cl    string
	img   *imageParam // for an image or sampler parameter (image.go)
}

// kernel is a //dgen:kernel spec.
type kernel struct {
	decl
	prog    *program
	clName  string
	fields  []field
	globals []*global
	// exts are the extensions the kernel needs (cpp.Guard.Needs): it
	// exists only on devices that have them.
	exts []string
}

// global is a //dgen:global variable.
type global struct {
	decl
	elem       types.Type
	size       int64
	imageScope bool
	access     string
	cl         string // OpenCL C type, "" when unknown (file outside the build)
}

// state is the model with the checks' shared tables and diagnostics.
type state struct {
	l            *loaded
	diags        Diagnostics
	programs     []*program
	kernels      []*kernel
	globals      []*global
	allocs       []decl
	specs        []decl
	specDefaults map[string]specDefault   // by spec constant name, for those with default=
	specLims     map[string]specLimits    // by spec constant name: min=, max=, tune=
	structs      map[string]*clsrc.Layout // generated OpenCL C structs by "struct name"
	prelude      map[string]string        // struct name -> declaration
	preludeOrder []string
	sizes        types.Sizes
	sourceBytes  int // the program sources read so far
}

func newState(l *loaded) *state {
	sizes := l.sizes
	if sizes == nil {
		sizes = types.SizesFor("gc", "amd64")
	}
	return &state{l: l, structs: map[string]*clsrc.Layout{}, prelude: map[string]string{}, specDefaults: map[string]specDefault{}, specLims: map[string]specLimits{},
		sizes: sizes}
}
