package gen

import (
	"fmt"
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
