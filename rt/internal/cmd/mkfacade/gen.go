package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/tools/go/packages"
)

// kind is how rt shows a type of the core.
type kind int

const (
	handle   kind = iota + 1 // type T core.T, converted for free
	free                     // a struct of the core's fields, converted for free
	value                    // a struct of the core's exported fields, converted field by field
	identity                 // a value struct of which rt makes one per core value (identities)
	alias                    // type T = the core's right-hand side
)

// gen generates the facade. Its maps are keyed by the core's objects.
type gen struct {
	pkg     *packages.Package
	core    *types.Package
	hand    map[string]bool            // what rt declares by hand
	kinds   map[*types.TypeName]kind   // the core's types that rt shows
	hiddenF map[*types.TypeName]string // the core's types declared in hiddenFiles
	imports map[string]string          // import path → name, of the generated file
	helpers map[string]string          // name → declaration, written last
	body    bytes.Buffer
	errs    []error
}

// conv is how a type of the core appears in rt: rt's type, and how a
// value converts from rt's to the core's and back.
type conv struct {
	rt       string
	toCore   func(e string) string
	fromCore func(e string) string
	same     bool // rt's type is the core's
}

func same(s string) conv {
	id := func(e string) string { return e }
	return conv{rt: s, toCore: id, fromCore: id, same: true}
}

func newGen(pkg *packages.Package, hand map[string]bool) *gen {
	return &gen{pkg: pkg, core: pkg.Types, hand: hand, kinds: map[*types.TypeName]kind{}, hiddenF: map[*types.TypeName]string{},
		imports: map[string]string{"github.com/dgen-go/dgen/rt/internal/core": "core"}, helpers: map[string]string{}}
}

func (g *gen) errorf(pos token.Pos, format string, args ...any) {
	g.errs = append(g.errs, fmt.Errorf("%s: %s", g.pkg.Fset.Position(pos), fmt.Sprintf(format, args...)))
}

// files returns the core's files in the order of their names.
func (g *gen) files() []*ast.File {
	files := append([]*ast.File(nil), g.pkg.Syntax...)
	sort.Slice(files, func(i, j int) bool { return g.fileName(files[i].Pos()) < g.fileName(files[j].Pos()) })
	return files
}

func (g *gen) fileName(pos token.Pos) string { return filepath.Base(g.pkg.Fset.Position(pos).Filename) }

// hiddenObj reports whether rt does not show obj, a name of the core.
func (g *gen) hiddenObj(obj types.Object) bool {
	return !obj.Exported() || hidden[obj.Name()] != "" || hiddenFiles[g.fileName(obj.Pos())] != ""
}

// run writes the facade's declarations into g.body.
func (g *gen) run() error {
	g.classify()
	g.sealed()
	for _, f := range g.files() {
		if hiddenFiles[g.fileName(f.Pos())] != "" {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				g.funcDecl(d)
			case *ast.GenDecl:
				switch d.Tok {
				case token.TYPE:
					g.typeDecl(d)
				case token.CONST, token.VAR:
					g.valueDecl(d)
				}
			}
		}
	}
	return errors.Join(g.errs...)
}

// classify sets the kind of every type of the core that rt shows.
func (g *gen) classify() {
	scope := g.core.Scope()
	var names []*types.TypeName
	for _, n := range scope.Names() {
		if tn, ok := scope.Lookup(n).(*types.TypeName); ok && !g.hiddenObj(tn) {
			names = append(names, tn)
			g.kinds[tn] = handle // for now: shows is all that the kinds below ask
		}
	}
	for _, tn := range names {
		g.kinds[tn] = g.kindOf(tn)
		if g.kinds[tn] == 0 {
			delete(g.kinds, tn)
		}
	}
}

// sealed checks that rt's types implement the interfaces of the core
// that rt shows as the core's types do. An unexported method of an
// interface is the core's own, and only a method of a field that the
// core's type embeds carries over to rt's type defined over it: one
// declared on the core's type itself would leave rt's type outside the
// interface, and rt's users unable to pass it.
func (g *gen) sealed() {
	var ifaces, others []*types.TypeName
	for tn, k := range g.kinds {
		if _, ok := tn.Type().Underlying().(*types.Interface); ok {
			ifaces = append(ifaces, tn)
		} else if k != alias {
			others = append(others, tn)
		}
	}
	byName := func(a, b *types.TypeName) int { return strings.Compare(a.Name(), b.Name()) }
	slices.SortFunc(ifaces, byName)
	slices.SortFunc(others, byName)
	for _, it := range ifaces {
		iface := it.Type().Underlying().(*types.Interface)
		for i := range iface.NumMethods() {
			m := iface.Method(i)
			if m.Exported() {
				continue
			}
			for _, tn := range others {
				obj, index, _ := types.LookupFieldOrMethod(tn.Type(), true, g.core, m.Name())
				if _, ok := obj.(*types.Func); !ok {
					continue
				}
				if k := g.kinds[tn]; len(index) == 1 || (k != handle && k != free) {
					g.errorf(obj.Pos(), "rt's %s would not implement %s as the core's does: declare %s on the type of a field that %s embeds", tn.Name(), it.Name(), m.Name(), tn.Name())
				}
			}
		}
	}
}

// kindOf returns the kind of tn, or 0 where rt does not show it.
func (g *gen) kindOf(tn *types.TypeName) kind {
	if a, ok := tn.Type().(*types.Alias); ok {
		if !g.shows(a.Rhs()) {
			return 0
		}
		return alias
	}
	st, ok := tn.Type().Underlying().(*types.Struct)
	if !ok {
		return handle
	}
	exported, all := 0, true
	for i := range st.NumFields() {
		f := st.Field(i)
		switch {
		case !f.Exported() || hidden[tn.Name()+"."+f.Name()] != "":
			all = false
		default:
			exported++
			if g.mentionsCore(f.Type()) {
				all = false
			}
		}
	}
	switch {
	case exported == 0:
		return handle
	case identities[tn.Name()] != "":
		return identity
	case all:
		return free
	}
	return value
}

// mentionsCore reports whether t mentions a type of the core.
func (g *gen) mentionsCore(t types.Type) bool {
	found := false
	walk(t, func(t types.Type) {
		if n := typeName(t); n != nil && n.Pkg() == g.core {
			found = true
		}
	})
	return found
}

// shows reports whether every type that t mentions is one that rt may
// show: the core's that rt shows, and no other internal package's.
func (g *gen) shows(t types.Type) bool {
	ok := true
	walk(t, func(t types.Type) {
		n := typeName(t)
		switch {
		case n == nil || n.Pkg() == nil:
		case n.Pkg() == g.core:
			if _, shown := g.kinds[n]; !shown {
				ok = false
			}
		case strings.Contains(n.Pkg().Path(), "/internal/"):
			ok = false
		}
	})
	return ok
}

// walk calls f for t and each type that it is made of.
func walk(t types.Type, f func(types.Type)) {
	f(t)
	switch t := t.(type) {
	case *types.Alias:
		walk(t.Rhs(), f)
	case *types.Named:
		for i := range t.TypeArgs().Len() {
			walk(t.TypeArgs().At(i), f)
		}
	case *types.Pointer:
		walk(t.Elem(), f)
	case *types.Slice:
		walk(t.Elem(), f)
	case *types.Array:
		walk(t.Elem(), f)
	case *types.Map:
		walk(t.Key(), f)
		walk(t.Elem(), f)
	case *types.Chan:
		walk(t.Elem(), f)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				walk(tup.At(i).Type(), f)
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			walk(t.Field(i).Type(), f)
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			walk(t.Method(i).Type(), f)
		}
	}
}

// typeName returns the name of a named type or alias; nil for another.
func typeName(t types.Type) *types.TypeName {
	switch t := t.(type) {
	case *types.Named:
		return t.Obj()
	case *types.Alias:
		return t.Obj()
	}
	return nil
}

// qualifier names the packages of the generated file's types, and
// imports them.
func (g *gen) qualifier(p *types.Package) string {
	if name, ok := g.imports[p.Path()]; ok {
		return name
	}
	for path, name := range g.imports {
		if name == p.Name() {
			g.errorf(token.NoPos, "packages %s and %s are both named %s", path, p.Path(), name)
		}
	}
	g.imports[p.Path()] = p.Name()
	return p.Name()
}

// typeString returns t as the generated file names it.
func (g *gen) typeString(t types.Type) string { return types.TypeString(t, g.qualifier) }

// mapType returns how t, a type of a core signature or field, appears in
// rt; false where rt does not show it.
func (g *gen) mapType(t types.Type) (conv, bool) {
	if !g.mentionsCore(t) {
		return same(g.typeString(t)), g.shows(t)
	}
	switch t := t.(type) {
	case *types.Alias:
		if g.kinds[t.Obj()] == alias {
			return same(t.Obj().Name()), true
		}
	case *types.Named:
		return g.mapNamed(t)
	case *types.Pointer:
		return g.mapPointer(t)
	case *types.Slice:
		return g.mapSlice(t)
	case *types.Signature:
		return g.mapFunc(t)
	}
	return conv{}, false
}

// typeArgs returns the type arguments of t as rt and the core write them.
func (g *gen) typeArgs(t *types.Named) (rt, core string, ok bool) {
	if t.TypeArgs().Len() == 0 {
		return "", "", true
	}
	var rs, cs []string
	for i := range t.TypeArgs().Len() {
		c, ok := g.mapType(t.TypeArgs().At(i))
		if !ok {
			return "", "", false
		}
		rs, cs = append(rs, c.rt), append(cs, g.typeString(t.TypeArgs().At(i)))
	}
	return "[" + strings.Join(rs, ", ") + "]", "[" + strings.Join(cs, ", ") + "]", true
}

func (g *gen) mapNamed(t *types.Named) (conv, bool) {
	k := g.kinds[t.Obj()]
	rtArgs, coreArgs, ok := g.typeArgs(t)
	if !ok {
		return conv{}, false
	}
	name, coreName := t.Obj().Name()+rtArgs, "core."+t.Obj().Name()+coreArgs
	switch k {
	case handle, free:
		return conv{rt: name,
			toCore:   func(e string) string { return coreName + "(" + e + ")" },
			fromCore: func(e string) string { return name + "(" + e + ")" }}, true
	case value:
		if rtArgs != "" {
			return conv{}, false
		}
		return conv{rt: name,
			toCore:   func(e string) string { return "toCore" + name + "(" + e + ")" },
			fromCore: func(e string) string { return "fromCore" + name + "(" + e + ")" }}, true
	}
	return conv{}, false
}

func (g *gen) mapPointer(t *types.Pointer) (conv, bool) {
	n, ok := t.Elem().(*types.Named)
	if !ok || n.Obj().Pkg() != g.core {
		return conv{}, false
	}
	elem, ok := g.mapNamed(n)
	switch k := g.kinds[n.Obj()]; {
	case k == identity:
		name := n.Obj().Name()
		return conv{rt: "*" + name,
			toCore:   func(e string) string { return "toCore" + name + "(" + e + ")" },
			fromCore: func(e string) string { return "fromCore" + name + "(" + e + ")" }}, true
	case !ok:
		return conv{}, false
	case k == handle:
		coreName := "*" + g.typeString(n)
		return conv{rt: "*" + elem.rt,
			toCore:   func(e string) string { return "(" + coreName + ")(" + e + ")" },
			fromCore: func(e string) string { return "(*" + elem.rt + ")(" + e + ")" }}, true
	}
	// A pointer to a value: a copy, converted.
	base := n.Obj().Name() + "Ptr"
	cs := "*" + g.typeString(n)
	g.helper("toCore"+base, fmt.Sprintf("// toCore%[1]s returns x as the core takes it.\nfunc toCore%[1]s(x *%[2]s) %[3]s {\n\tif x == nil {\n\t\treturn nil\n\t}\n\tc := %[4]s\n\treturn &c\n}\n", base, elem.rt, cs, elem.toCore("*x")))
	g.helper("fromCore"+base, fmt.Sprintf("// fromCore%[1]s returns c as rt shows it.\nfunc fromCore%[1]s(c %[3]s) *%[2]s {\n\tif c == nil {\n\t\treturn nil\n\t}\n\tx := %[4]s\n\treturn &x\n}\n", base, elem.rt, cs, elem.fromCore("*c")))
	return conv{rt: "*" + elem.rt,
		toCore:   func(e string) string { return "toCore" + base + "(" + e + ")" },
		fromCore: func(e string) string { return "fromCore" + base + "(" + e + ")" }}, true
}

func (g *gen) mapSlice(t *types.Slice) (conv, bool) {
	elem, ok := g.mapType(t.Elem())
	if !ok {
		return conv{}, false
	}
	base := strings.TrimLeft(elem.rt, "*") + "Slice"
	cs := g.typeString(t)
	g.helper("toCore"+base, fmt.Sprintf("// toCore%[1]s returns s as the core takes it.\nfunc toCore%[1]s(s []%[2]s) %[3]s {\n\tif s == nil {\n\t\treturn nil\n\t}\n\tc := make(%[3]s, len(s))\n\tfor i, e := range s {\n\t\tc[i] = %[4]s\n\t}\n\treturn c\n}\n", base, elem.rt, cs, elem.toCore("e")))
	g.helper("fromCore"+base, fmt.Sprintf("// fromCore%[1]s returns c as rt shows it.\nfunc fromCore%[1]s(c %[3]s) []%[2]s {\n\tif c == nil {\n\t\treturn nil\n\t}\n\ts := make([]%[2]s, len(c))\n\tfor i, e := range c {\n\t\ts[i] = %[4]s\n\t}\n\treturn s\n}\n", base, elem.rt, cs, elem.fromCore("e")))
	return conv{rt: "[]" + elem.rt,
		toCore:   func(e string) string { return "toCore" + base + "(" + e + ")" },
		fromCore: func(e string) string { return "fromCore" + base + "(" + e + ")" }}, true
}

// mapFunc maps a function type that rt's caller passes to the core (a
// callback): the core calls it with its own values, which convert to
// rt's, and its results convert back.
func (g *gen) mapFunc(t *types.Signature) (conv, bool) {
	var rtParams, coreParams, args []string
	name := "func"
	var tparams []*types.TypeParam
	note := func(t types.Type) {
		walk(t, func(t types.Type) {
			if tp, ok := t.(*types.TypeParam); ok && !containsTP(tparams, tp) {
				tparams = append(tparams, tp)
			}
		})
	}
	for i := range t.Params().Len() {
		p := t.Params().At(i)
		c, ok := g.mapType(p.Type())
		if !ok || t.Variadic() {
			return conv{}, false
		}
		note(p.Type())
		pn := p.Name()
		if pn == "" || pn == "_" {
			pn = fmt.Sprintf("p%d", i)
		}
		rtParams = append(rtParams, pn+" "+c.rt)
		coreParams = append(coreParams, pn+" "+g.typeString(p.Type()))
		args = append(args, c.fromCore(pn))
		name += exportedName(c.rt)
	}
	var rtResults, coreResults []string
	var res []conv
	for i := range t.Results().Len() {
		r := t.Results().At(i)
		c, ok := g.mapType(r.Type())
		if !ok {
			return conv{}, false
		}
		note(r.Type())
		rtResults, coreResults, res = append(rtResults, c.rt), append(coreResults, g.typeString(r.Type())), append(res, c)
	}
	rtSig := "func(" + strings.Join(rtParams, ", ") + ")" + results(rtResults)
	coreSig := "func(" + strings.Join(coreParams, ", ") + ")" + results(coreResults)
	call := "f(" + strings.Join(args, ", ") + ")"
	var body string
	switch {
	case len(res) == 0:
		body = "\t\t" + call + "\n"
	case len(res) == 1:
		body = "\t\treturn " + res[0].toCore(call) + "\n"
	default:
		var rs, outs []string
		for i, c := range res {
			rs, outs = append(rs, fmt.Sprintf("r%d", i)), append(outs, c.toCore(fmt.Sprintf("r%d", i)))
		}
		body = "\t\t" + strings.Join(rs, ", ") + " := " + call + "\n\t\treturn " + strings.Join(outs, ", ") + "\n"
	}
	var tps []string
	for _, tp := range tparams {
		tps = append(tps, tp.Obj().Name()+" "+g.typeString(tp.Constraint()))
	}
	tpDecl := ""
	if len(tps) > 0 {
		tpDecl = "[" + strings.Join(tps, ", ") + "]"
	}
	g.helper(name, fmt.Sprintf("// %[1]s returns f as the core takes it; nil for nil, which the core refuses.\nfunc %[1]s%[2]s(f %[3]s) %[4]s {\n\tif f == nil {\n\t\treturn nil\n\t}\n\treturn %[4]s {\n%[5]s\t}\n}\n", name, tpDecl, rtSig, coreSig, body))
	return conv{rt: rtSig,
		toCore: func(e string) string { return name + "(" + e + ")" },
		fromCore: func(e string) string {
			g.errs = append(g.errs, fmt.Errorf("a function of the core returns a function (%s)", coreSig))
			return e
		}}, true
}

func containsTP(tps []*types.TypeParam, tp *types.TypeParam) bool {
	for _, t := range tps {
		if t == tp {
			return true
		}
	}
	return false
}

// exportedName returns the letters and digits of a type's name, the first
// upper case: "*Queue" is "Queue", "T" is "T".
func exportedName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	out := []rune(b.String())
	if len(out) > 0 {
		out[0] = unicode.ToUpper(out[0])
	}
	return string(out)
}

func results(rs []string) string {
	switch len(rs) {
	case 0:
		return ""
	case 1:
		return " " + rs[0]
	}
	return " (" + strings.Join(rs, ", ") + ")"
}
