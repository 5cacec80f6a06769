package gen

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen/internal/clsrc"
	"github.com/dgen-go/dgen/gen/internal/cpp"
)

// The model of a package. The generator is a pipeline of values, as
// go/types' Checker and x/tools' passes are: load makes the loaded package;
// collect makes the model, its marked declarations; checkShapes returns
// the model less the declarations it rejects; checkDecls returns the
// declared types (declared); the front end and the kernel checks read the
// declared types and record what they find in each program and kernel;
// emit reads all of it. state holds what every phase shares: the loaded
// package, the target's sizes and the diagnostics.

// decl is a declaration that carries a directive.
type decl struct {
	name string
	file *srcFile
	pos  token.Pos
	dir  *annotations.Directive
	spec *ast.ValueSpec // for vars
	ts   *ast.TypeSpec  // for kernel specs
}

// program is a //dgen:program variable.
type program struct {
	decl
	source, options string
}

// front is what the front end made of one program's source (checkPrograms):
// the phases after it read it and change nothing in it.
type front struct {
	*program
	clPath   string                         // the source file
	pp       *cpp.Result                    // the preprocessed source
	unit     *clsrc.Unit                    // its declarations
	image    string                         // the device image, before read_write image guards (emit)
	table    []*global                      // the globals the image uses
	kernels  map[string]clsrc.KernelGlobals // hidden arguments by kernel
	absolute map[string]bool                // the headers named by their absolute paths (imageName)
}

// fronts are the front end's results, by program.
type fronts map[*program]*front

// binding is what checkKernels bound a kernel spec to: its program's front
// end, the fields matched with the kernel's parameters, the fields that
// give specialization-constant values, the device globals
// bound as hidden arguments, the extensions the kernel needs (it exists
// only on devices that have them: cpp.Guard.Needs), and the guard that a
// read_write image parameter adds to the program's image (image.go).
type binding struct {
	prog    *front
	fields  []field
	specs   []specField
	globals []*global
	exts    []string
	rwGuard string
}

// specField is a field of a kernel spec that gives a launch its own value
// of a specialization constant: of type rt.Spec[T] (elem is T), tagged
// dgen:"spec=Name" with konst the //dgen:specconst variable Name.
type specField struct {
	name  string
	konst decl
	elem  types.Type
}

// bindings are checkKernels' results, by kernel spec.
type bindings map[*kernel]*binding

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
	clName string
}

// global is a //dgen:global variable.
type global struct {
	decl
	imageScope bool
	access     string
}

// model is collect's result: the package's marked declarations, in the
// order of their files.
type model struct {
	programs []*program
	kernels  []*kernel
	globals  []*global
	allocs   []decl
	specs    []decl
}

// declared is checkDecls' result: the model with what the declarations'
// Go types say.
type declared struct {
	model
	specDefaults map[string]specDefault // by spec constant name, for those with default=
	specLims     map[string]specLimits  // by spec constant name: min=, max=, tune=
	globalTypes  map[*global]globalType // the globals whose type checked
	structs      *structTable           // the OpenCL C structs of Go struct types
}

// globalType is a device global's element type in Go and in OpenCL C.
type globalType struct {
	elem types.Type
	cl   string
}

// structTable holds the OpenCL C struct declarations that dgen writes for
// Go struct types, by "struct name", in the order they were declared
// (a struct after the structs of its fields).
type structTable struct {
	layouts map[string]*clsrc.Layout
	decls   map[string]string
	order   []string
}

// state is what every phase shares: the loaded package, the target's
// sizes and the diagnostics reported so far.
type state struct {
	l           *loaded
	diags       Diagnostics
	sizes       types.Sizes
	sourceBytes int // the program sources read so far
}

func newState(l *loaded) *state {
	sizes := l.sizes
	if sizes == nil {
		sizes = types.SizesFor("gc", "amd64")
	}
	return &state{l: l, sizes: sizes}
}
