package gen

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dgen-go/dgen/annotations"
)

// specLimits are the bounds (min=, max=) and tuning candidates (tune=) of
// a //dgen:specconst, as OpenCL C literals for the runtime.
type specLimits struct {
	min, max string
	tune     []string
	lo, hi   constant.Value // min and max as constants; nil when not declared
}

// specLimits checks the min=, max= and tune= of the specialization
// constant d of basic type b, whose default (if any) is def: each value
// must be a constant of the type, min at most max, the default and every
// candidate within the bounds, and the candidate list not empty and
// without repeats. It reports what is wrong and returns ok false.
func (s *state) specLimits(d decl, b *types.Basic, def string) (specLimits, bool) {
	var lim specLimits
	ok := true
	bound := func(name string) constant.Value {
		arg, has := d.dir.Arg(name)
		if !has {
			return nil
		}
		if b.Info()&types.IsBoolean != 0 {
			s.errorf(arg.ValuePos, "specialization constant %s: %s= needs a number type, not %s", d.name, name, b)
			ok = false
			return nil
		}
		v, lit, err := specConst(arg.Value, b)
		if err != nil {
			s.errorf(arg.ValuePos, "specialization constant %s: %s=%s: %v", d.name, name, arg.Value, err)
			ok = false
			return nil
		}
		if name == "min" {
			lim.min = lit
		} else {
			lim.max = lit
		}
		return v
	}
	lo, hi := bound("min"), bound("max")
	lim.lo, lim.hi = lo, hi
	if lo != nil && hi != nil && constant.Compare(lo, token.GTR, hi) {
		arg, _ := d.dir.Arg("min")
		s.errorf(arg.ValuePos, "specialization constant %s: min=%s is greater than max=%s", d.name, lo, hi)
		return lim, false
	}
	within := func(pos token.Pos, what, text string) bool {
		v, _, err := specConst(text, b)
		if err != nil || b.Info()&types.IsBoolean != 0 {
			return err == nil
		}
		switch {
		case lo != nil && constant.Compare(v, token.LSS, lo):
			s.errorf(pos, "specialization constant %s: %s %s is below min=%s", d.name, what, text, lo)
		case hi != nil && constant.Compare(v, token.GTR, hi):
			s.errorf(pos, "specialization constant %s: %s %s is above max=%s", d.name, what, text, hi)
		default:
			return true
		}
		return false
	}
	if arg, has := d.dir.Arg("default"); has && def != "" && !within(arg.ValuePos, "default", arg.Value) {
		ok = false
	}
	if arg, has := d.dir.Arg("tune"); has {
		tune, tok := s.specTune(d, b, arg, within)
		lim.tune, ok = tune, ok && tok
	}
	return lim, ok
}

// specTune checks the candidates of tune= and returns their literals.
func (s *state) specTune(d decl, b *types.Basic, arg annotations.Arg, within func(token.Pos, string, string) bool) ([]string, bool) {
	if strings.TrimSpace(arg.Value) == "" {
		s.errorf(arg.ValuePos, "specialization constant %s: tune= lists no candidates (write tune=\"8,16,32\")", d.name)
		return nil, false
	}
	var out []string
	seen := map[string]bool{}
	ok := true
	for _, text := range strings.Split(arg.Value, ",") {
		text = strings.TrimSpace(text)
		_, lit, err := specConst(text, b)
		switch {
		case err != nil:
			s.errorf(arg.ValuePos, "specialization constant %s: tune candidate %q: %v", d.name, text, err)
			ok = false
		case seen[lit]:
			s.errorf(arg.ValuePos, "specialization constant %s: tune candidate %s is listed twice", d.name, text)
			ok = false
		case !within(arg.ValuePos, "tune candidate", text):
			ok = false
		default:
			seen[lit] = true
			out = append(out, lit)
		}
	}
	return out, ok
}

// specConst reads text as a constant of type b, as default= is read, and
// returns its value (nil for a boolean) and OpenCL C literal.
func specConst(text string, b *types.Basic) (constant.Value, string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, "", fmt.Errorf("empty value")
	}
	d, err := parseSpecDefault(text, b)
	if err != nil {
		return nil, "", err
	}
	if b.Info()&types.IsBoolean != 0 {
		return nil, d.cl, nil
	}
	tok := token.INT
	if b.Info()&types.IsFloat != 0 {
		tok = token.FLOAT
	}
	lit := strings.TrimPrefix(d.goLit, "-")
	v := constant.MakeFromLiteral(lit, tok, 0)
	if v.Kind() == constant.Unknown {
		v = constant.MakeFromLiteral(lit, token.INT, 0)
	}
	if strings.HasPrefix(d.goLit, "-") {
		v = constant.UnaryOp(token.SUB, v, 0)
	}
	return v, d.cl, nil
}

// addSpecLimits adds to dict, the generated descriptor of the constant
// name, its bounds and candidates (fields Min, Max and Tune), where it
// declares them.
func (d *declared) addSpecLimits(dict jen.Dict, name string) {
	lim := d.specLims[name]
	if lim.min != "" {
		dict[jen.Id("Min")] = jen.Lit(lim.min)
	}
	if lim.max != "" {
		dict[jen.Id("Max")] = jen.Lit(lim.max)
	}
	if lim.tune != nil {
		var vals []jen.Code
		for _, t := range lim.tune {
			vals = append(vals, jen.Lit(t))
		}
		dict[jen.Id("Tune")] = jen.Index().String().Values(vals...)
	}
}

// checkSpecUses reports, anywhere in the package's Go code, what would
// fail or mislead at run time in a use of a specialization constant:
//   - a constant value outside the directive's bounds passed to Set or Of
//     (Dim.Of(300) where max=256), which the launch or Set would refuse;
//   - a value made by one constant's Of given to a kernel spec's field of
//     another (Nearest{Dim: Block.Of(4)}, n.Dim = Block.Of(4)), which the
//     launch would refuse.
func (s *state) checkSpecUses(d *declared, bs bindings) {
	consts := map[types.Object]decl{}
	for _, sc := range d.specs {
		if sc.file.info != nil {
			if obj := sc.file.info.Defs[sc.spec.Names[0]]; obj != nil {
				consts[obj] = sc
			}
		}
	}
	if len(consts) == 0 {
		return
	}
	fields := map[types.Object]string{} // spec fields to their constants
	for k, b := range bs {
		if k.file.info == nil || len(b.specs) == 0 {
			continue
		}
		st, ok := k.file.info.Defs[k.ts.Name].Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for i := range st.NumFields() {
			for _, sf := range b.specs {
				if st.Field(i).Name() == sf.name {
					fields[st.Field(i)] = sf.konst.name
				}
			}
		}
	}
	for _, f := range s.l.files {
		if f.info == nil {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				s.checkSpecCall(f, d, consts, n)
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok {
					s.checkSpecValue(f, consts, fields[f.info.Uses[id]], n.Value)
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if sel, ok := lhs.(*ast.SelectorExpr); ok && len(n.Lhs) == len(n.Rhs) {
						s.checkSpecValue(f, consts, fields[f.info.Uses[sel.Sel]], n.Rhs[i])
					}
				}
			}
			return true
		})
	}
}

// specReceiver returns the constant whose method call is the selector
// X.name, where X names a //dgen:specconst variable.
func specReceiver(f *srcFile, consts map[types.Object]decl, call *ast.CallExpr, name string) (decl, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return decl{}, false
	}
	id := receiverIdent(sel)
	if id == nil {
		return decl{}, false
	}
	sc, ok := consts[f.info.Uses[id]]
	return sc, ok
}

// checkSpecCall reports a constant argument of sc.Of(v) or sc.Set(ctx, v)
// outside the bounds of sc.
func (s *state) checkSpecCall(f *srcFile, d *declared, consts map[types.Object]decl, call *ast.CallExpr) {
	arg := -1
	sc, ok := specReceiver(f, consts, call, "Of")
	if ok {
		arg = 0
	} else if sc, ok = specReceiver(f, consts, call, "Set"); ok {
		arg = 1
	}
	if arg < 0 || arg >= len(call.Args) {
		return
	}
	tv, ok := f.info.Types[call.Args[arg]]
	lim := d.specLims[sc.name]
	if !ok || tv.Value == nil || tv.Value.Kind() == constant.Bool {
		return
	}
	v := tv.Value
	switch {
	case lim.lo != nil && constant.Compare(v, token.LSS, lim.lo):
		s.errorf(call.Args[arg].Pos(), "specialization constant %s: %s is below min=%s, so %s.%s would fail at run time", sc.name, v, lim.lo, sc.name, map[int]string{0: "Of", 1: "Set"}[arg])
	case lim.hi != nil && constant.Compare(v, token.GTR, lim.hi):
		s.errorf(call.Args[arg].Pos(), "specialization constant %s: %s is above max=%s, so %s.%s would fail at run time", sc.name, v, lim.hi, sc.name, map[int]string{0: "Of", 1: "Set"}[arg])
	}
}

// checkSpecValue reports a value made by another constant's Of given to a
// kernel spec's field of the constant konst ("" for any other field).
func (s *state) checkSpecValue(f *srcFile, consts map[types.Object]decl, konst string, value ast.Expr) {
	if konst == "" {
		return
	}
	call, ok := ast.Unparen(value).(*ast.CallExpr)
	if !ok {
		return
	}
	if sc, ok := specReceiver(f, consts, call, "Of"); ok && sc.name != konst {
		s.errorf(call.Pos(), "this field gives specialization constant %s, but %s.Of makes a value of %s: write %s.Of", konst, sc.name, sc.name, konst)
	}
}
