package gen

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/dave/jennifer/jen"
)

// Guards against stale generated code (rt/codegen's stale.go documents
// the contract): the type arguments that every generic call of the
// generated file names, the layout and field guards of the struct types
// it binds, and the fingerprints of declarations' shapes that rt checks
// at first use.

// typeCodeOK returns the spelling of t in the generated file, or false
// where the file cannot name it (a type of another package that is not
// exported, a generic type's parameter).
func (s *state) typeCodeOK(t types.Type) (jen.Code, bool) {
	switch u := types.Unalias(t).(type) {
	case *types.Basic:
		return jen.Id(u.Name()), u.Kind() != types.Invalid && u.Info()&types.IsUntyped == 0
	case *types.Array:
		e, ok := s.typeCodeOK(u.Elem())
		return jen.Index(jen.Lit(int(u.Len()))).Add(e), ok
	case *types.Named:
		obj := u.Obj()
		if obj.Pkg() == nil || obj.Parent() != obj.Pkg().Scope() {
			return nil, false
		}
		own := obj.Pkg().Path() == s.l.path || obj.Pkg().Path() == s.l.path+"_test"
		if !own && !obj.Exported() {
			return nil, false
		}
		// jen writes a name of the file's own package unqualified, and
		// qualifies one of the package from its external test package.
		c := jen.Qual(obj.Pkg().Path(), obj.Name())
		if n := u.TypeArgs().Len(); n > 0 {
			args := make([]jen.Code, n)
			for i := range n {
				a, ok := s.typeCodeOK(u.TypeArgs().At(i))
				if !ok {
					return nil, false
				}
				args[i] = a
			}
			c = c.Types(args...)
		}
		return c, true
	}
	return nil, false
}

// typeArgs returns the explicit type argument list of a generic call for
// the type t: Types(t), or nothing where the file cannot name t (the call
// then infers it, as a file of contract version 2 does).
func (s *state) typeArgs(c *jen.Statement, t types.Type) *jen.Statement {
	if t == nil {
		return c
	}
	if tc, ok := s.typeCodeOK(t); ok {
		return c.Types(tc)
	}
	return c
}

// shapeString is the shape of t that rt's desc.ShapeString computes from
// reflect: field names, types and order, and array lengths, through
// nested structs and arrays, basic types by kind, and rt's handle types
// by name.
func shapeString(t types.Type) string {
	var b strings.Builder
	writeShape(&b, t)
	return b.String()
}

// writeShape writes the shape of t to b, with reflect.Kind's names of the
// kinds that are not basic.
func writeShape(b *strings.Builder, t types.Type) {
	t = types.Unalias(t)
	if n, ok := rtNamed(t); ok {
		b.WriteString("rt." + n.Obj().Name())
		return
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		b.WriteString(types.Typ[u.Kind()].Name())
	case *types.Array:
		b.WriteString("[" + strconv.FormatInt(u.Len(), 10) + "]")
		writeShape(b, u.Elem())
	case *types.Struct:
		b.WriteString("struct{")
		for i := range u.NumFields() {
			f := u.Field(i)
			b.WriteString(f.Name() + " ")
			writeShape(b, f.Type())
			b.WriteString(";")
		}
		b.WriteString("}")
	case *types.Pointer:
		b.WriteString("ptr")
	case *types.Slice:
		b.WriteString("slice")
	case *types.Map:
		b.WriteString("map")
	case *types.Chan:
		b.WriteString("chan")
	case *types.Signature:
		b.WriteString("func")
	case *types.Interface:
		b.WriteString("interface")
	default:
		b.WriteString("invalid")
	}
}

// shapeOf returns the codegen.ShapeOf[T](hash) of a descriptor for the
// type t, or nil where the file cannot name t.
func (s *state) shapeOf(t types.Type) jen.Code {
	tc, ok := s.typeCodeOK(t)
	if !ok {
		return nil
	}
	return jen.Qual(CodegenPath, "ShapeOf").Types(tc).Call(jen.Id(fmt.Sprintf("%#016x", xxhash.Sum64String(shapeString(t)))))
}

// guardStructs writes, into the generated file of each struct type's own
// declaration, the guards of every struct type of the package that t
// binds (t itself, the elements of rt.Buffer[T] and rt.Local[T] fields,
// arrays, fields), each once.
func (s *state) guardStructs(outs map[string]*out, guarded map[*types.TypeName]bool, t types.Type) {
	t = types.Unalias(t)
	switch u := t.(type) {
	case *types.Array:
		s.guardStructs(outs, guarded, u.Elem())
		return
	case *types.Named:
		if e, ok := rtArg(u, "Buffer"); ok && e != nil {
			s.guardStructs(outs, guarded, e)
			return
		}
		if e, ok := rtArg(u, "Local"); ok && e != nil {
			s.guardStructs(outs, guarded, e)
			return
		}
		st, ok := u.Underlying().(*types.Struct)
		obj := u.Obj()
		if !ok || guarded[obj] || obj.Pkg() == nil || u.TypeArgs().Len() > 0 || obj.Parent() != obj.Pkg().Scope() {
			return
		}
		guarded[obj] = true
		for i := range st.NumFields() {
			s.guardStructs(outs, guarded, st.Field(i).Type())
		}
		if f := s.declFile(obj); f != nil && (outs[s.outName(f)] != nil || f.build == "" && !f.test) {
			s.guardStruct(s.fileFor(outs, f), u, st)
		}
	}
}

// declFile returns the file of the package that declares obj, or nil.
func (s *state) declFile(obj types.Object) *srcFile {
	if !obj.Pos().IsValid() {
		return nil
	}
	path := s.l.fset.Position(obj.Pos()).Filename
	for _, f := range s.l.files {
		if f.path == path && f.pkg == obj.Pkg() {
			return f
		}
	}
	return nil
}

// guardStruct writes the guards of the struct type n: a copy of it as go
// generate read it, a layout guard that compares their sizes and their
// fields' offsets, and a guard of each field's type. A struct whose
// fields the file cannot spell, or that embeds a field, gets none: rt's
// fingerprint sees it.
func (s *state) guardStruct(o *out, n *types.Named, st *types.Struct) {
	name := n.Obj().Name()
	shape := "_dgenShape_" + name
	fields := make([]jen.Code, st.NumFields())
	for i := range st.NumFields() {
		f := st.Field(i)
		tc, ok := s.typeCodeOK(f.Type())
		if !ok || f.Embedded() {
			return
		}
		fields[i] = jen.Id(f.Name()).Add(tc)
	}
	zero := func(n string) *jen.Statement { return jen.Id(n).Values() }
	unsafeCall := func(fn string, arg jen.Code) *jen.Statement { return jen.Qual("unsafe", fn).Call(arg) }
	diff := jen.Parens(unsafeCall("Sizeof", zero(name)).Op("^").Add(unsafeCall("Sizeof", zero(shape))))
	var checks []jen.Code
	for i := range st.NumFields() {
		f := st.Field(i)
		if f.Name() == "_" {
			continue
		}
		diff = diff.Op("|").Parens(unsafeCall("Offsetof", zero(name).Dot(f.Name())).Op("^").Add(unsafeCall("Offsetof", zero(shape).Dot(f.Name()))))
		tc, _ := s.typeCodeOK(f.Type())
		checks = append(checks, jen.Var().Id("_").Qual(CodegenPath, "Is").Types(tc).Op("=").Qual(CodegenPath, "TypeOf").Call(jen.Id("v").Dot(f.Name()),
			jen.Lit(fmt.Sprintf("ERROR: field %s of %s changed type after go generate read it: run go generate", f.Name(), name))))
	}
	length := jen.Lit(1).Op("-").Min(jen.Lit(1), diff)
	o.decls = append(o.decls,
		jen.Comment(fmt.Sprintf("%s is %s as go generate read it: the guards below compile only while %s is the same.", shape, name, name)).Line().
			Type().Id(shape).Struct(fields...),
		jen.Var().Id("_").Qual(CodegenPath, "Fresh").Op("=").Qual(CodegenPath, "Layout").Types(jen.Index(length).Struct()).
			Call(jen.Lit(fmt.Sprintf("ERROR: %s changed after go generate read it (a field was added, removed or moved): run go generate", name))))
	if len(checks) > 0 {
		o.decls = append(o.decls, jen.Func().Id("_").Params(jen.Id("v").Id(name)).Block(checks...))
	}
}
