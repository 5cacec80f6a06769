// Package annotations defines the grammar of dgen's directives: the
// //dgen: comments that mark Go declarations for the generator.
//
// A directive is a line comment that begins exactly with "//dgen:", followed
// by a verb and space-separated arguments:
//
//	//dgen:program source=hotspot.cl options="-cl-mad-enable"
//	//dgen:kernel program=Hotspot name=hotspot_step
//	//dgen:global device_image_scope host_access=read
//
// An argument is either a bare flag (device_image_scope) or key=value, where
// the value is either a run of non-space characters without quotes or a
// double-quoted Go string literal (with Go escapes). Like //go: directives,
// a directive has no space between "//" and "dgen:": "// dgen:kernel" is an
// ordinary comment, as are "//dgenerate" and block comments. Such near misses
// are not directives, but [NearMiss] reports them and [Fix] returns the
// directive meant: dgen reports each as an error.
//
// The table returned by [Markers] lists every directive with the declaration it
// applies to and its arguments; [Reference] renders it as the text that
// "dgen markers" prints. [ParseComment] and [ParseCommentGroup] turn comments
// into [Directive] values with exact positions; every problem (unknown verb,
// unknown, duplicate or missing argument, bad value, malformed quoting) is an
// [*Error] carrying the position of the offending text.
package annotations

import (
	"fmt"
	"strings"
)

// Prefix is the text that starts every directive comment.
const Prefix = "//dgen:"

// DeclKind is the kind of Go declaration a directive may be attached to.
type DeclKind int

// The declaration kinds.
const (
	// DeclOther is any declaration no directive applies to (a function,
	// a constant, a non-struct type, a declaration inside a function).
	DeclOther DeclKind = iota
	// DeclVar is a package-level variable declaration.
	DeclVar
	// DeclStructType is a package-level type declaration of a struct type.
	DeclStructType
)

// String returns a phrase naming the declaration kind, for messages.
func (k DeclKind) String() string {
	switch k {
	case DeclVar:
		return "package-level variable"
	case DeclStructType:
		return "package-level struct type"
	}
	return "other declaration"
}

// ArgKind says what values an argument accepts.
type ArgKind int

// The argument kinds.
const (
	// ArgFlag is a bare flag; it takes no value.
	ArgFlag ArgKind = iota
	// ArgString accepts any string, including the empty string when quoted.
	ArgString
	// ArgPath accepts a non-empty, slash-separated, relative file path.
	ArgPath
	// ArgGoIdent accepts a Go identifier (ASCII letters, digits and '_').
	ArgGoIdent
	// ArgCIdent accepts an OpenCL C identifier.
	ArgCIdent
	// ArgEnum accepts one of the values listed in MarkerArg.Values.
	ArgEnum
)

// String returns the kind's name as the reference shows it.
func (k ArgKind) String() string {
	switch k {
	case ArgFlag:
		return "flag"
	case ArgString:
		return "string"
	case ArgPath:
		return "path"
	case ArgGoIdent:
		return "Go identifier"
	case ArgCIdent:
		return "OpenCL C identifier"
	case ArgEnum:
		return "enum"
	}
	return fmt.Sprintf("ArgKind(%d)", int(k))
}

// MarkerArg describes one argument of a directive.
type MarkerArg struct {
	// Name is the argument's key, as written before '=' (or the flag itself).
	Name string
	// Kind says which values the argument accepts.
	Kind ArgKind
	// Required reports whether the argument must be present.
	Required bool
	// Values lists the accepted values of an ArgEnum argument.
	Values []string
	// Default is the value assumed when the argument is absent, if any.
	Default string
	// Doc is a one-sentence description.
	Doc string
}

// Marker describes one directive.
type Marker struct {
	// Verb is the word after "//dgen:".
	Verb string
	// Decl is the kind of declaration the directive must be attached to.
	Decl DeclKind
	// GoType is the declared type the generator expects, for documentation
	// and messages ("rt.DeviceGlobal[T]"); checking it needs go/types and is
	// the generator's job.
	GoType string
	// Args lists the arguments, in the order the reference shows them.
	Args []MarkerArg
	// Doc describes the directive in full sentences.
	Doc string
}

// Arg returns the specification of the named argument.
func (s *Marker) Arg(name string) (*MarkerArg, bool) {
	for i := range s.Args {
		if s.Args[i].Name == name {
			return &s.Args[i], true
		}
	}
	return nil, false
}

// Synopsis returns the directive's syntax line, such as
// "//dgen:kernel program=X [name=N]".
func (s *Marker) Synopsis() string {
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteString(s.Verb)
	for _, a := range s.Args {
		b.WriteByte(' ')
		var part string
		switch a.Kind {
		case ArgFlag:
			part = a.Name
		case ArgEnum:
			part = a.Name + "=" + strings.Join(a.Values, "|")
		case ArgString:
			part = a.Name + `="..."`
		case ArgPath:
			part = a.Name + "=FILE"
		default:
			part = a.Name + "=NAME"
		}
		if !a.Required {
			part = "[" + part + "]"
		}
		b.WriteString(part)
	}
	return b.String()
}

// The host_access values.
const (
	HostAccessReadWrite = "read_write"
	HostAccessRead      = "read"
	HostAccessWrite     = "write"
	HostAccessNone      = "none"
)

// The directive verbs.
const (
	VerbProgram   = "program"
	VerbKernel    = "kernel"
	VerbGlobal    = "global"
	VerbAlloc     = "alloc"
	VerbSpecConst = "specconst"
)

// specs builds the directive table. It is a function, not a package
// variable, so that no caller can modify the table another caller sees.
func markers() []Marker {
	return []Marker{
		{
			Verb:   VerbProgram,
			Decl:   DeclVar,
			GoType: "rt.Program",
			Doc: "Declares a device image: one OpenCL C source file, read at generate time, " +
				"rewritten for device globals and embedded in the generated file.",
			Args: []MarkerArg{
				{Name: "source", Kind: ArgPath, Required: true,
					Doc: "The OpenCL C file, relative to the package directory."},
				{Name: "options", Kind: ArgString,
					Doc: "Build options passed to the OpenCL compiler."},
			},
		},
		{
			Verb:   VerbKernel,
			Decl:   DeclStructType,
			GoType: "struct",
			Doc: "Declares a kernel spec: the struct's fields map, in order, to the kernel's " +
				"parameters, and dgen checks each field's type against its parameter; " +
				"a field of type rt.Spec[T] tagged dgen:\"spec=Name\" is no parameter but the launch's own value of the specialization constant Name.",
			Args: []MarkerArg{
				{Name: "program", Kind: ArgGoIdent, Required: true,
					Doc: "The rt.Program variable, in the same package, whose source holds the kernel."},
				{Name: "name", Kind: ArgCIdent,
					Doc: "The kernel's name in the OpenCL C source; the default is the struct type's name."},
			},
		},
		{
			Verb:   VerbGlobal,
			Decl:   DeclVar,
			GoType: "rt.DeviceGlobal[T]",
			Doc: "Declares a device global: a zero-initialised variable of plain-data type T " +
				"that kernels refer to by the Go variable's name and the host reads and writes.",
			Args: []MarkerArg{
				{Name: "device_image_scope", Kind: ArgFlag,
					Doc: "One instance per device image instead of one per device; at most one program may use it."},
				{Name: "host_access", Kind: ArgEnum, Default: HostAccessReadWrite,
					Values: []string{HostAccessRead, HostAccessWrite, HostAccessReadWrite, HostAccessNone},
					Doc:    "Which host accesses are allowed."},
			},
		},
		{
			Verb:   VerbAlloc,
			Decl:   DeclVar,
			GoType: "rt.AllocSite[T]",
			Doc: "Declares a named allocation site: its tag keys the allocator's free list, " +
				"so memory freed from the site is reused by the site's next allocation.",
		},
		{
			Verb:   VerbSpecConst,
			Decl:   DeclVar,
			GoType: "rt.SpecConst[T]",
			Doc: "Declares a specialization constant of scalar type T, seen by the kernel source " +
				"as the macro named like the variable; each value builds its own program. " +
				"A launch gives its own value through a kernel spec's rt.Spec[T] field (Name.Of(v)), else the context's (Set, else the default) applies. " +
				"A build of a program that uses it fails, naming it, when it has neither a value set nor a default.",
			Args: []MarkerArg{
				{Name: "default", Kind: ArgString,
					Doc: "The value when none is set: a Go constant of type T (16, -3, 0.5, true), checked to fit T."},
				{Name: "min", Kind: ArgString,
					Doc: "The smallest value allowed, a number of type T: checked against the default, the candidates and every constant passed to Of or Set at generate time, and against every value, set or given per launch, at run time."},
				{Name: "max", Kind: ArgString,
					Doc: "The largest value allowed, a number of type T, checked as min is."},
				{Name: "tune", Kind: ArgString,
					Doc: "The candidates among which rt.Tune chooses by timing, comma-separated (\"8,16,32,64\"): each of type T and within the bounds, at least one."},
			},
		},
	}
}

// Markers returns the table of every directive, in reference order. The
// result is a fresh copy that the caller may modify.
func Markers() []Marker {
	return markers()
}

// Lookup returns the specification of the directive with the given verb.
func Lookup(verb string) (Marker, bool) {
	for _, s := range markers() {
		if s.Verb == verb {
			return s, true
		}
	}
	return Marker{}, false
}

// Reference renders the reference of every directive as Markdown, the text
// that "dgen markers" prints.
func Reference() string {
	var b strings.Builder
	b.WriteString("# dgen directives\n\n")
	b.WriteString("A directive is a line comment that starts exactly with `" + Prefix +
		"` (no space after `//`) directly above a package-level declaration. " +
		"Arguments are bare flags or `key=value`; a value containing spaces or quotes " +
		"is written as a double-quoted Go string. Unknown directives and arguments are errors.\n")
	for _, s := range markers() {
		fmt.Fprintf(&b, "\n## %s%s\n\n", Prefix, s.Verb)
		fmt.Fprintf(&b, "    %s\n", s.Synopsis())
		fmt.Fprintf(&b, "    var or type: %s (%s)\n\n", s.Decl, s.GoType)
		b.WriteString(s.Doc)
		b.WriteString("\n")
		if len(s.Args) == 0 {
			b.WriteString("\nNo arguments.\n")
			continue
		}
		b.WriteString("\n| argument | kind | required | description |\n| --- | --- | --- | --- |\n")
		for _, a := range s.Args {
			kind := a.Kind.String()
			if a.Kind == ArgEnum {
				kind = strings.Join(a.Values, " \\| ")
			}
			req := "no"
			if a.Required {
				req = "yes"
			}
			doc := a.Doc
			if a.Default != "" {
				doc += " Default: " + a.Default + "."
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", a.Name, kind, req, doc)
		}
	}
	b.WriteString(typeTable)
	return b.String()
}

// typeTable is the reference's table of the Go types of kernel spec
// fields for OpenCL C parameter types.
const typeTable = `
## Go and OpenCL C types

The fields of a kernel spec have, in order, the Go types of the kernel's parameters;
device globals, spec constants and buffer elements use the same table.

| OpenCL C | Go |
| --- | --- |
| ` + "`char` `uchar` `short` `ushort` `int` `uint` `long` `ulong`" + ` | ` + "`int8` `uint8` `int16` `uint16` `int32` `uint32` `int64` `uint64`" + ` |
| ` + "`float` `double` `half`" + ` | ` + "`float32` `float64` `uint16` (the bits)" + ` |
| ` + "`floatN` `intN` … (N = 2, 3, 4, 8, 16)" + ` | ` + "`[N]float32` `[N]int32` …, with `[4]` for N = 3" + ` |
| ` + "`struct S`" + ` | a Go struct with the same fields, offsets and size |
| ` + "`__global T*`, `__global const T*`, `__constant T*`" + ` | ` + "`rt.Buffer[T']`" + `, T' the Go type of T; any ` + "`rt.Buffer`" + ` for ` + "`void*`" + ` |
| ` + "`__local T*`" + ` | ` + "`rt.Local[T']`" + ` |

Two struct tags mark fields: ` + "`dgen:\"out\"`" + `, on a ` + "`__global`" + ` buffer that the kernel writes (not a
` + "`const`" + ` one), for which dgen generates ` + "`Alloc<Field>`" + `; and ` + "`dgen:\"spec=Name\"`" + ` (or ` + "`dgen:\"spec\"`" + `,
naming the field's own name), on a field of type ` + "`rt.Spec[T]`" + `, which is no kernel parameter: it gives
the launch its own value of the ` + "`//dgen:specconst`" + ` variable Name (` + "`Name.Of(v)`" + `; the zero value leaves
it to the context). T is the constant's type, and the kernel's program must use the constant.
`
