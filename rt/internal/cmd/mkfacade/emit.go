package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// helper adds a declaration written after the others, once.
func (g *gen) helper(name, decl string) { g.helpers[name] = decl }

// comment writes the comment group c, each line after indent.
func (g *gen) comment(c *ast.CommentGroup, indent string) {
	if c == nil {
		return
	}
	for _, l := range c.List {
		g.body.WriteString(indent + l.Text + "\n")
	}
}

// funcDecl writes the forwarder of d, a function or method of the core,
// where rt shows it.
func (g *gen) funcDecl(d *ast.FuncDecl) {
	fn, ok := g.pkg.TypesInfo.Defs[d.Name].(*types.Func)
	if !ok || g.hiddenObj(fn) || g.hand[recvPrefix(d)+d.Name.Name] {
		return
	}
	sig := fn.Type().(*types.Signature)
	if r := sig.Recv(); r != nil {
		n := typeName(deref(r.Type()))
		if _, shown := g.kinds[n]; !shown || !n.Exported() || g.hand[n.Name()] {
			return
		}
	}
	if !g.shows(sig) {
		return
	}
	src, err := g.forwarder(fn, sig)
	if err != nil {
		g.errorf(d.Pos(), "%s: %v", fn.Name(), err)
		return
	}
	g.body.WriteString("\n")
	g.comment(d.Doc, "")
	g.body.WriteString(src)
}

func deref(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// forwarder returns the declaration of rt's function or method that
// calls fn.
func (g *gen) forwarder(fn *types.Func, sig *types.Signature) (string, error) {
	var b strings.Builder
	b.WriteString("func ")
	target := "core." + fn.Name()
	locals := map[string]bool{}
	if r := sig.Recv(); r != nil {
		c, ok := g.mapType(r.Type())
		if !ok {
			return "", fmt.Errorf("rt does not show the receiver %s", r.Type())
		}
		rn := r.Name()
		if rn == "" || rn == "_" {
			rn = "x"
		}
		locals[rn] = true
		fmt.Fprintf(&b, "(%s %s) ", rn, c.rt)
		target = c.toCore(rn) + "." + fn.Name()
	}
	b.WriteString(fn.Name())
	if tps := sig.TypeParams(); tps.Len() > 0 {
		var decl, args []string
		for i := range tps.Len() {
			tp := tps.At(i)
			decl, args = append(decl, tp.Obj().Name()+" "+g.typeString(tp.Constraint())), append(args, tp.Obj().Name())
		}
		b.WriteString("[" + strings.Join(decl, ", ") + "]")
		target += "[" + strings.Join(args, ", ") + "]"
	}
	params, args, pre, err := g.params(sig, locals)
	if err != nil {
		return "", err
	}
	var rts []string
	var res []conv
	for i := range sig.Results().Len() {
		c, ok := g.mapType(sig.Results().At(i).Type())
		if !ok {
			return "", fmt.Errorf("rt does not show the result type %s", sig.Results().At(i).Type())
		}
		rts, res = append(rts, c.rt), append(res, c)
	}
	for _, l := range []string{"wl", "r0", "r1", "r2", "r3"} {
		if locals[l] {
			return "", fmt.Errorf("a parameter is named %s, which the forwarder uses", l)
		}
	}
	fmt.Fprintf(&b, "(%s)%s {\n", strings.Join(groupParams(params), ", "), results(rts))
	for _, p := range pre {
		b.WriteString("\t" + p + "\n")
	}
	call := target + "(" + strings.Join(args, ", ") + ")"
	allSame := true
	for _, c := range res {
		allSame = allSame && c.same
	}
	switch {
	case len(res) == 0:
		b.WriteString("\t" + call + "\n")
	case allSame:
		b.WriteString("\treturn " + call + "\n")
	case len(res) == 1:
		b.WriteString("\treturn " + res[0].fromCore(call) + "\n")
	default:
		var rs, outs []string
		for i, c := range res {
			r := fmt.Sprintf("r%d", i)
			rs, outs = append(rs, r), append(outs, c.fromCore(r))
		}
		b.WriteString("\t" + strings.Join(rs, ", ") + " := " + call + "\n\treturn " + strings.Join(outs, ", ") + "\n")
	}
	b.WriteString("}\n")
	return b.String(), nil
}

// params returns the parameters of rt's forwarder of sig, the arguments
// of its call of the core's and the statements before the call; locals
// collects their names.
func (g *gen) params(sig *types.Signature, locals map[string]bool) (params, args, pre []string, err error) {
	for i := range sig.Params().Len() {
		p := sig.Params().At(i)
		pn := p.Name()
		if pn == "" || pn == "_" {
			pn = fmt.Sprintf("p%d", i)
		}
		locals[pn] = true
		if sig.Variadic() && i == sig.Params().Len()-1 {
			elem := p.Type().(*types.Slice).Elem()
			if g.isCoreEvent(elem) {
				params = append(params, pn+" ...*Event")
				pre = append(pre, "var wl core.WaitList")
				args = append(args, "waits(&wl, "+pn+")...")
				g.helper("waits", waitsHelper)
				continue
			}
			c, ok := g.mapType(p.Type())
			if !ok {
				return nil, nil, nil, fmt.Errorf("rt does not show the variadic parameter type %s", p.Type())
			}
			params, args = append(params, pn+" ..."+strings.TrimPrefix(c.rt, "[]")), append(args, c.toCore(pn)+"...")
			continue
		}
		c, ok := g.mapType(p.Type())
		if !ok {
			return nil, nil, nil, fmt.Errorf("rt does not show the parameter type %s", p.Type())
		}
		params, args = append(params, pn+" "+c.rt), append(args, c.toCore(pn))
	}
	return params, args, pre, nil
}

// groupParams returns the parameters "name type" with the names of
// neighbours of one type grouped, as go doc shows them: "off, n int".
func groupParams(params []string) []string {
	var out []string
	for i := 0; i < len(params); i++ {
		name, typ, _ := strings.Cut(params[i], " ")
		names := []string{name}
		for i+1 < len(params) && !strings.HasPrefix(typ, "...") {
			n, t, _ := strings.Cut(params[i+1], " ")
			if t != typ {
				break
			}
			names = append(names, n)
			i++
		}
		out = append(out, strings.Join(names, ", ")+" "+typ)
	}
	return out
}

// isCoreEvent reports whether t is *core.Event.
func (g *gen) isCoreEvent(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n := typeName(p.Elem())
	return n != nil && n.Pkg() == g.core && n.Name() == "Event"
}

const waitsHelper = `// waits returns the wait list wait as the core takes it, in l when it
// fits.
func waits(l *core.WaitList, wait []*Event) []*core.Event {
	return core.Waits(l, wait, coreEvent)
}

// coreEvent returns e as the core's.
func coreEvent(e *Event) *core.Event { return (*core.Event)(e) }
`

// typeDecl writes rt's types of the type declaration d.
func (g *gen) typeDecl(d *ast.GenDecl) {
	for _, s := range d.Specs {
		ts := s.(*ast.TypeSpec)
		tn, ok := g.pkg.TypesInfo.Defs[ts.Name].(*types.TypeName)
		if !ok || g.hand[ts.Name.Name] {
			continue
		}
		k, shown := g.kinds[tn]
		if !shown {
			continue
		}
		doc := ts.Doc
		if doc == nil && !d.Lparen.IsValid() {
			doc = d.Doc
		}
		g.body.WriteString("\n")
		g.comment(doc, "")
		tparams, targs := g.typeParams(tn)
		switch k {
		case alias:
			fmt.Fprintf(&g.body, "type %s = %s\n", tn.Name(), g.typeString(tn.Type().(*types.Alias).Rhs()))
		case handle:
			fmt.Fprintf(&g.body, "type %s%s core.%s%s\n", tn.Name(), tparams, tn.Name(), targs)
		default:
			g.structDecl(tn, tparams, ts.Type.(*ast.StructType), k)
		}
	}
}

// typeParams returns the type parameters of the named type tn, declared
// and as arguments: "[T any]", "[T]".
func (g *gen) typeParams(tn *types.TypeName) (decl, args string) {
	n, ok := tn.Type().(*types.Named)
	if !ok || n.TypeParams().Len() == 0 {
		return "", ""
	}
	var ds, as []string
	for i := range n.TypeParams().Len() {
		tp := n.TypeParams().At(i)
		ds, as = append(ds, tp.Obj().Name()+" "+g.typeString(tp.Constraint())), append(as, tp.Obj().Name())
	}
	return "[" + strings.Join(ds, ", ") + "]", "[" + strings.Join(as, ", ") + "]"
}

// structDecl writes rt's struct of the core's value type tn, and its
// conversions.
func (g *gen) structDecl(tn *types.TypeName, tparams string, st *ast.StructType, k kind) {
	name := tn.Name()
	fmt.Fprintf(&g.body, "type %s%s struct {\n", name, tparams)
	var to, from []string // keyed elements of the core's and rt's
	for _, f := range st.Fields.List {
		var names []string
		for _, n := range f.Names {
			if n.IsExported() && hidden[name+"."+n.Name] == "" {
				names = append(names, n.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		c, ok := g.mapType(g.pkg.TypesInfo.TypeOf(f.Type))
		if !ok {
			g.errorf(f.Pos(), "rt does not show the type of %s.%s: hide the field (hidden)", name, names[0])
			continue
		}
		g.comment(f.Doc, "\t")
		fmt.Fprintf(&g.body, "\t%s %s", strings.Join(names, ", "), c.rt)
		if f.Comment != nil {
			g.body.WriteString(" " + f.Comment.List[0].Text)
		}
		g.body.WriteString("\n")
		for _, n := range names {
			to, from = append(to, n+": "+c.toCore("x."+n)), append(from, n+": "+c.fromCore("c."+n))
		}
	}
	switch k {
	case identity:
		g.body.WriteString("\n\timpl *core." + name + "\n}\n")
		field := identities[name]
		fmt.Fprintf(&g.body, `
// fromCore%[1]s returns rt's *%[1]s of c, made on c's first use; nil for nil.
func fromCore%[1]s(c *core.%[1]s) *%[1]s {
	if c == nil {
		return nil
	}
	if x, ok := c.%[2]s.Load().(*%[1]s); ok {
		return x
	}
	c.%[2]s.CompareAndSwap(nil, &%[1]s{%[3]s, impl: c})
	return c.%[2]s.Load().(*%[1]s)
}

// toCore%[1]s returns the core's %[1]s of x; nil for nil.
func toCore%[1]s(x *%[1]s) *core.%[1]s {
	if x == nil {
		return nil
	}
	return x.impl
}
`, name, field, strings.Join(from, ", "))
	case value:
		g.body.WriteString("}\n")
		fmt.Fprintf(&g.body, `
// toCore%[1]s returns x as the core takes it.
func toCore%[1]s(x %[1]s) core.%[1]s {
	return core.%[1]s{%[2]s}
}

// fromCore%[1]s returns c as rt shows it.
func fromCore%[1]s(c core.%[1]s) %[1]s {
	return %[1]s{%[3]s}
}
`, name, strings.Join(to, ", "), strings.Join(from, ", "))
	default:
		g.body.WriteString("}\n")
	}
}

// valueDecl writes rt's constants or variables of the declaration d.
func (g *gen) valueDecl(d *ast.GenDecl) {
	var specs []string
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		var names, values []string
		for _, n := range vs.Names {
			obj := g.pkg.TypesInfo.Defs[n]
			if obj == nil || g.hiddenObj(obj) || g.hand[n.Name] || !g.shows(obj.Type()) {
				continue
			}
			c, ok := g.mapType(obj.Type())
			if !ok || (d.Tok == token.VAR && !c.same) {
				g.errorf(n.Pos(), "rt does not show the type of %s", n.Name)
				continue
			}
			names, values = append(names, n.Name), append(values, c.fromCore("core."+n.Name))
		}
		if len(names) == 0 {
			continue
		}
		var b strings.Builder
		if vs.Doc != nil && d.Lparen.IsValid() {
			for _, l := range vs.Doc.List {
				b.WriteString("\t" + l.Text + "\n")
			}
		}
		fmt.Fprintf(&b, "\t%s = %s", strings.Join(names, ", "), strings.Join(values, ", "))
		if vs.Comment != nil {
			b.WriteString(" " + vs.Comment.List[0].Text)
		}
		specs = append(specs, b.String()+"\n")
	}
	if len(specs) == 0 {
		return
	}
	g.body.WriteString("\n")
	g.comment(d.Doc, "")
	if !d.Lparen.IsValid() {
		g.body.WriteString(d.Tok.String() + " " + strings.TrimPrefix(specs[0], "\t"))
		return
	}
	g.body.WriteString(d.Tok.String() + " (\n" + strings.Join(specs, "") + ")\n")
}

// file returns the generated file, unformatted.
func (g *gen) file() []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by mkfacade from rt/internal/core. DO NOT EDIT.\n\npackage rt\n\nimport (\n")
	var paths []string
	for p := range g.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n")
	b.Write(g.body.Bytes())
	var names []string
	for n := range g.helpers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("\n" + g.helpers[n])
	}
	return b.Bytes()
}
