package gen

import (
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/dgen-go/dgen/gen/internal/clsrc"
)

// The Go side of the Go↔OpenCL C type mapping: the scalar table itself is
// clsrc's; here are the rt generic types, the OpenCL C declarations that
// dgen writes for Go types, and the comparison of Go types with the
// OpenCL C types of the user's source.

// rtArg returns the type argument of the rt generic type named name that
// the variable or field has, or reports why not.
func rtArg(t types.Type, name string) (types.Type, bool) {
	n, ok := rtNamed(t)
	if !ok || n.Obj().Name() != name {
		return nil, false
	}
	if n.TypeArgs().Len() != 1 {
		return nil, true
	}
	return n.TypeArgs().At(0), true
}

func isRT(t types.Type, name string) bool {
	n, ok := rtNamed(t)
	return ok && n.Obj().Name() == name
}

// rtNamed returns t as a type of rt.
func rtNamed(t types.Type) (*types.Named, bool) {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return nil, false
	}
	return n, n.Obj().Pkg().Path() == RuntimePath
}

func (s *state) varType(d decl) types.Type {
	if d.file.info == nil {
		return nil
	}
	obj := d.file.info.Defs[d.spec.Names[0]]
	if obj == nil {
		return nil
	}
	return obj.Type()
}

// clStructName returns the name of the OpenCL C struct that dgen declares
// for a Go struct type: the Go name and a hash of the type's full spelling
// (package path and type arguments), so that two Go types never share one.
func clStructName(n *types.Named) string {
	full := types.TypeString(n, nil)
	var b strings.Builder
	b.WriteString("dgen_")
	for _, r := range n.Obj().Name() {
		if r < 0x80 && (r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	fmt.Fprintf(&b, "_%08x", uint32(xxhash.Sum64String(full)))
	return b.String()
}

// clType returns the OpenCL C spelling of a plain Go type, declaring the
// structs it needs in tab, or an error saying why it has none.
func (s *state) clType(t types.Type, tab *structTable) (string, error) {
	switch u := types.Unalias(t).(type) {
	case *types.Basic:
		if info, ok := clsrc.ForGo(u.Kind()); ok {
			return info.Name, nil
		}
		if u.Kind() == types.Int || u.Kind() == types.Uint || u.Kind() == types.Uintptr {
			return "", fmt.Errorf("%s has no fixed size on the device; use int32 or int64", u)
		}
		return "", fmt.Errorf("%s has no OpenCL C counterpart", u)
	case *types.Array:
		c, err := s.clType(u.Elem(), tab)
		if err != nil {
			return "", err
		}
		if i := strings.Index(c, "["); i >= 0 {
			return fmt.Sprintf("%s[%d]%s", c[:i], u.Len(), c[i:]), nil
		}
		return fmt.Sprintf("%s[%d]", c, u.Len()), nil
	case *types.Named:
		st, ok := u.Underlying().(*types.Struct)
		if !ok {
			return s.clType(u.Underlying(), tab)
		}
		return s.declareStruct(u, st, tab)
	case *types.Struct:
		return "", fmt.Errorf("an unnamed struct type has no OpenCL C name; declare a named type")
	}
	return "", fmt.Errorf("%s is not plain data", t)
}

// declareStruct declares in tab the OpenCL C struct of a Go struct type,
// checking that OpenCL C lays it out as Go does.
func (s *state) declareStruct(u *types.Named, st *types.Struct, tab *structTable) (string, error) {
	name := u.Obj().Name()
	cname := clStructName(u)
	key := "struct " + cname
	if _, ok := tab.layouts[key]; ok {
		return key, nil
	}
	var fields []clsrc.Field
	for i := range st.NumFields() {
		f := st.Field(i)
		if clReserved[f.Name()] {
			return "", fmt.Errorf("field %s of %s: %s is a reserved word in OpenCL C, where dgen declares the struct; rename it", f.Name(), name, f.Name())
		}
		c, err := s.clType(f.Type(), tab)
		if err != nil {
			return "", fmt.Errorf("field %s of %s: %w", f.Name(), name, err)
		}
		name := f.Name()
		if name == "_" {
			name = fmt.Sprintf("_dgen_pad%d", i) // a blank field pads: C needs a name
		}
		fields = append(fields, clsrc.Field{Name: name, Type: c})
	}
	declText, layout, err := clsrc.StructDecl(cname, fields, tab.layouts)
	if err != nil {
		return "", fmt.Errorf("struct %s: %w", name, err)
	}
	vars := make([]*types.Var, st.NumFields())
	for i := range vars {
		vars[i] = st.Field(i)
	}
	offs := s.sizes.Offsetsof(vars)
	if int64(layout.Size) != s.sizes.Sizeof(u) {
		return "", fmt.Errorf("struct %s is %d bytes in Go but %d in OpenCL C", name, s.sizes.Sizeof(u), layout.Size)
	}
	for i, fl := range layout.Fields {
		if int64(fl.Offset) != offs[i] {
			return "", fmt.Errorf("field %s of %s is at byte %d in Go but %d in OpenCL C", fl.Name, name, offs[i], fl.Offset)
		}
	}
	tab.layouts[key] = layout
	tab.decls[key] = fmt.Sprintf("/* %s */\n%s", types.TypeString(u, nil), declText)
	tab.order = append(tab.order, key)
	return key, nil
}

// prelude returns the declarations of the structs that the OpenCL C types
// cs need, each after the structs of its fields.
func (tab *structTable) prelude(cs []string) string {
	need := map[string]bool{}
	for _, c := range cs {
		tab.deps(c, need)
	}
	var b strings.Builder
	for _, key := range tab.order {
		if need[key] {
			b.WriteString(tab.decls[key])
			b.WriteString("\n")
		}
	}
	return b.String()
}

// deps marks the struct declarations that the OpenCL C type c needs.
func (tab *structTable) deps(c string, need map[string]bool) {
	if i := strings.Index(c, "["); i >= 0 {
		c = c[:i]
	}
	if !strings.HasPrefix(c, "struct ") || need[c] {
		return
	}
	need[c] = true
	if l := tab.layouts[c]; l != nil {
		for _, f := range l.Fields {
			tab.deps(f.Type, need)
		}
	}
}

// plain reports why t is not plain data.
func plain(t types.Type) error {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&(types.IsBoolean|types.IsNumeric) != 0 {
			return nil
		}
		return fmt.Errorf("%s", u)
	case *types.Array:
		return plain(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if err := plain(u.Field(i).Type()); err != nil {
				return fmt.Errorf("field %s: %w", u.Field(i).Name(), err)
			}
		}
		return nil
	case *types.Pointer:
		return errors.New("a pointer")
	case *types.Slice:
		return errors.New("a slice")
	case *types.Map:
		return errors.New("a map")
	case *types.Interface:
		return errors.New("an interface")
	case *types.Chan:
		return errors.New("a channel")
	case *types.Signature:
		return errors.New("a func")
	}
	return fmt.Errorf("%s", t)
}

func typeString(t types.Type, pkg string) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p.Path() == pkg {
			return ""
		}
		return p.Name()
	})
}

// matcher compares Go types with the OpenCL C types of the user's source,
// reporting each difference at the Go position it concerns.
type matcher struct {
	s  *state
	ok bool
}

// match compares the Go type g, which the Go declaration at pos has, with
// the OpenCL C type c; what names the Go side in messages.
func (m *matcher) match(g types.Type, c *clsrc.Type, pos token.Pos, what string) {
	switch c.Kind {
	case clsrc.Scalar, clsrc.Vector:
		if got := typeString(g.Underlying(), ""); got != c.Info.Go {
			m.errorf(pos, "%s has type %s but OpenCL C %s needs %s", what, typeString(g, m.s.l.path), c.Name, c.Info.Go)
		}
	case clsrc.Array:
		a, ok := g.Underlying().(*types.Array)
		if !ok || a.Len() != int64(c.Len) {
			m.errorf(pos, "%s has type %s but OpenCL C %s needs an array of %d", what, typeString(g, m.s.l.path), c, c.Len)
			return
		}
		m.match(a.Elem(), c.Elem, pos, what+" element")
	case clsrc.Struct:
		m.matchStruct(g, c, pos, what)
	default:
		m.errorf(pos, "%s has type %s: OpenCL C %s has no Go counterpart", what, typeString(g, m.s.l.path), c)
	}
}

func (m *matcher) errorf(pos token.Pos, format string, args ...any) {
	m.ok = false
	m.s.errorf(pos, format, args...)
}

// matchStruct compares a Go struct with an OpenCL C struct field by field:
// count, order and type of the fields, their offsets, and the size, which
// shows differences in alignment and padding.
func (m *matcher) matchStruct(g types.Type, c *clsrc.Type, pos token.Pos, what string) {
	st, ok := g.Underlying().(*types.Struct)
	if !ok {
		m.errorf(pos, "%s has type %s but OpenCL C %s needs a struct", what, typeString(g, m.s.l.path), c.Name)
		return
	}
	gname := typeString(g, m.s.l.path)
	vars := make([]*types.Var, st.NumFields())
	var named []int // the fields that are not blank padding
	for i := range vars {
		vars[i] = st.Field(i)
		if vars[i].Name() != "_" {
			named = append(named, i)
		}
	}
	if len(named) != len(c.Fields) {
		pad := ""
		if len(named) != len(vars) {
			pad = " (blank padding fields not counted)"
		}
		m.errorf(pos, "%s: Go type %s has %d fields%s but OpenCL C %s has %d", what, gname, len(named), pad, c.Name, len(c.Fields))
		return
	}
	offs := m.s.sizes.Offsetsof(vars)
	for j, i := range named {
		f, cf := vars[i], c.Fields[j]
		fpos := f.Pos()
		if !fpos.IsValid() {
			fpos = pos
		}
		if k := fieldNamed(c, f.Name()); k >= 0 && k != j {
			m.errorf(fpos, "field %s of %s is at offset %d but OpenCL C field %s of %s, of the same name, is at offset %d: the fields are in another order", f.Name(), gname, offs[i], c.Fields[k].Name, c.Name, c.Fields[k].Offset)
			continue
		}
		if offs[i] != int64(cf.Offset) {
			m.errorf(fpos, "field %s of %s is at offset %d but OpenCL C field %s of %s is at offset %d", f.Name(), gname, offs[i], cf.Name, c.Name, cf.Offset)
			continue
		}
		m.match(f.Type(), cf.Type, fpos, fmt.Sprintf("field %s of %s (OpenCL C field %s of %s, both at offset %d)", f.Name(), gname, cf.Name, c.Name, cf.Offset))
	}
	m.padding(vars, offs, c, pos, gname)
	if size := m.s.sizes.Sizeof(g); size != int64(c.Size) {
		m.errorf(pos, "%s: Go type %s is %d bytes but OpenCL C %s is %d (aligned to %d)", what, gname, size, c.Name, c.Size, c.Align)
	}
}

// padding checks that every blank field of a Go struct lies where the
// OpenCL C struct c has padding: a blank field pads, it holds nothing.
func (m *matcher) padding(vars []*types.Var, offs []int64, c *clsrc.Type, pos token.Pos, gname string) {
	for i, f := range vars {
		if f.Name() != "_" {
			continue
		}
		lo, hi := offs[i], offs[i]+m.s.sizes.Sizeof(f.Type())
		for _, cf := range c.Fields {
			clo, chi := int64(cf.Offset), int64(cf.Offset+cf.Type.Size)
			if lo < chi && clo < hi {
				fpos := f.Pos()
				if !fpos.IsValid() {
					fpos = pos
				}
				m.errorf(fpos, "blank field of %s at bytes %d to %d overlaps OpenCL C field %s of %s (bytes %d to %d): a blank field may only pad where C has padding", gname, lo, hi, cf.Name, c.Name, clo, chi)
				break
			}
		}
	}
}

// fieldNamed returns the index of the field of c whose name is name up to
// case and underscores, or -1.
func fieldNamed(c *clsrc.Type, name string) int {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for i, f := range c.Fields {
		if norm(f.Name) == norm(name) {
			return i
		}
	}
	return -1
}
