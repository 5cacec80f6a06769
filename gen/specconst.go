package gen

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"strconv"
	"strings"
)

// specDefault is the default of a //dgen:specconst: the Go constant
// spelled for the generated file and the OpenCL C literal of the same
// value.
type specDefault struct {
	goLit, cl string
}

// specDefault checks the default=VALUE of a specialization constant of
// basic type b and returns it; ok is false when it was reported.
func (s *state) specDefault(d decl, b *types.Basic) (specDefault, bool) {
	arg, has := d.dir.Arg("default")
	if !has {
		return specDefault{}, true
	}
	v, err := parseSpecDefault(arg.Value, b)
	if err != nil {
		s.errorf(arg.ValuePos, "specialization constant %s: default=%s: %v", d.name, arg.Value, err)
		return specDefault{}, false
	}
	return v, true
}

// parseSpecDefault reads text as a Go constant of basic type b.
func parseSpecDefault(text string, b *types.Basic) (specDefault, error) {
	text = strings.TrimSpace(text)
	neg := strings.HasPrefix(text, "-")
	lit := strings.TrimPrefix(text, "-")
	var v constant.Value
	switch {
	case b.Info()&types.IsBoolean != 0:
		if text != "true" && text != "false" {
			return specDefault{}, fmt.Errorf("want true or false for %s", b)
		}
		cl := map[string]string{"true": "1", "false": "0"}[text]
		return specDefault{goLit: text, cl: cl}, nil
	case b.Info()&types.IsInteger != 0:
		v = constant.MakeFromLiteral(lit, token.INT, 0)
	case b.Info()&types.IsFloat != 0:
		v = constant.MakeFromLiteral(lit, token.FLOAT, 0)
		if v.Kind() == constant.Unknown {
			v = constant.MakeFromLiteral(lit, token.INT, 0)
		}
	}
	if v == nil || v.Kind() == constant.Unknown || lit == "" || strings.HasPrefix(lit, "-") || strings.HasPrefix(lit, "+") {
		return specDefault{}, fmt.Errorf("not a constant of type %s", b)
	}
	if neg {
		v = constant.UnaryOp(token.SUB, v, 0)
	}
	return specLiteral(v, b)
}

// specLiteral checks that v fits b and spells it in Go and in OpenCL C as
// rt spells a specialization constant's value (specLiteral in
// rt/internal/core/specvalue.go).
func specLiteral(v constant.Value, b *types.Basic) (specDefault, error) {
	if b.Info()&types.IsFloat != 0 {
		f, _ := constant.Float64Val(constant.ToFloat(v))
		bits := 64
		if b.Kind() == types.Float32 {
			bits = 32
			if math.Abs(f) > math.MaxFloat32 {
				return specDefault{}, fmt.Errorf("%s overflows %s", v, b)
			}
		}
		if math.IsInf(f, 0) {
			return specDefault{}, fmt.Errorf("%s overflows %s", v, b)
		}
		cl := strconv.FormatFloat(f, 'e', -1, bits)
		if bits == 32 {
			cl += "f"
		}
		return specDefault{goLit: strconv.FormatFloat(f, 'g', -1, bits), cl: cl}, nil
	}
	if v.Kind() != constant.Int {
		return specDefault{}, fmt.Errorf("%s is not an integer", v)
	}
	size := map[types.BasicKind]int{types.Int8: 8, types.Int16: 16, types.Int32: 32, types.Int64: 64, types.Int: 64,
		types.Uint8: 8, types.Uint16: 16, types.Uint32: 32, types.Uint64: 64, types.Uint: 64, types.Uintptr: 64}[b.Kind()]
	unsigned := b.Info()&types.IsUnsigned != 0
	lo, hi := constant.MakeInt64(-1<<(size-1)), constant.MakeUint64(1<<(size-1)-1)
	if unsigned {
		lo, hi = constant.MakeInt64(0), constant.MakeUint64(math.MaxUint64>>(64-size))
	}
	if constant.Compare(v, token.LSS, lo) || constant.Compare(v, token.GTR, hi) {
		return specDefault{}, fmt.Errorf("%s overflows %s (range %s to %s)", v, b, lo, hi)
	}
	text := v.ExactString()
	cl := text
	switch {
	case unsigned && size == 64:
		cl += "UL"
	case unsigned:
		cl += "u"
	case size == 64 && text == "-9223372036854775808":
		cl = "(-9223372036854775807L-1)"
	case size == 64:
		cl += "L"
	}
	return specDefault{goLit: text, cl: cl}, nil
}

// specDefaultOr0 returns the default of the spec constant name, 0 when it
// has none.
func (d *declared) specDefaultOr0(name string) specDefault {
	if v, ok := d.specDefaults[name]; ok {
		return v
	}
	return specDefault{goLit: "0", cl: "0"}
}
