package core

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/dgen-go/dgen/rt/internal/desc"
)

// Specialization-constant values: the values set on a context
// (SpecConst.Set, which calls setSpecValue), which every program the
// context builds from then on is built with and cached under, and their
// checks: every registered //dgen:specconst declaration records its type,
// bounds and tuning candidates here by macro name, and setSpecValue and
// clearSpecValue refuse a name that none has and a value that does not
// parse as the type or lies outside the bounds. A launch's own values are
// speclaunch.go's, tuning tune.go's.

// specValue is the value of one specialization constant as a build sees
// it: the macro Name defined to Value (-D Name=Value). Value is an OpenCL C
// literal such as "16", "-3" or "0.5f"; specLiteral formats one.
type specValue struct {
	Name  string
	Value string
}

// identChar reports whether r may appear in a C identifier: a letter or
// underscore, or, where digit is true (not the first character), a digit.
func identChar(r rune, digit bool) bool {
	return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || digit && '0' <= r && r <= '9'
}

// checkSpecValue reports whether name is a C identifier and value a
// literal that can go on a build command line unquoted.
func checkSpecValue(name, value string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidArgument)
	}
	for i, r := range name {
		if !identChar(r, i > 0) {
			return fmt.Errorf("%w: %q is not a C identifier", ErrInvalidArgument, name)
		}
	}
	if value == "" {
		return fmt.Errorf("%w: empty value", ErrInvalidArgument)
	}
	if strings.ContainsAny(value, " \t\r\n\v\f\"'\\") {
		return fmt.Errorf("%w: value %q contains a space, quote or backslash", ErrInvalidArgument, value)
	}
	return nil
}

// setSpecValue sets the specialization constant name to value for every
// program that the context builds from now on. A name that no registered
// //dgen:specconst constant has, or a value that does not parse as the
// constant's type, is an error wrapping ErrInvalidArgument; a value outside
// the bounds the directive declares (min=, max=) one wrapping
// ErrOutOfRange. The value is kept as specLiteral writes it (so that "16"
// and "0x10" share a build) and becomes -D name=value
// at build and part of every cache key, so that a changed value builds
// (once) and caches another program, and setting an earlier value again
// finds the earlier program. Commands already enqueued are not affected.
// SpecConst.Set, for a //dgen:specconst declaration, calls it with the
// constant's name and specLiteral of its value.
func (c *Context) setSpecValue(name, value string) error {
	if err := c.enter(); err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	defer c.exit()
	if err := checkSpecValue(name, value); err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	canon, err := checkRegistered(name, value)
	if err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	c.cache.pc.SetSpec(name, canon)
	return nil
}

// clearSpecValue removes the value of the specialization constant name, so
// that programs see its default again. A name that no registered constant
// has is an error wrapping ErrInvalidArgument.
func (c *Context) clearSpecValue(name string) error {
	if err := c.enter(); err != nil {
		return fmt.Errorf("clear specialization constant %s: %w", name, err)
	}
	defer c.exit()
	if len(specChecks(name)) == 0 {
		return fmt.Errorf("clear specialization constant %s: %w: no //dgen:specconst declaration registers a constant of that name", name, ErrInvalidArgument)
	}
	c.cache.pc.ClearSpec(name)
	return nil
}

// specValues returns the specialization-constant values set on the
// context, sorted by name.
func (c *Context) specValues() []specValue {
	if c == nil {
		return nil
	}
	set := c.cache.pc.Specs()
	if len(set) == 0 {
		return nil
	}
	vals := make([]specValue, len(set))
	for i, v := range set {
		vals[i] = specValue(v)
	}
	return vals
}

// specLiteral formats v, a boolean or number, as the OpenCL C literal that
// setSpecValue expects: integers in decimal (unsigned with a u suffix where
// needed), float32 with an f suffix and float64 in full precision, both
// exactly round-tripping; booleans as 1 or 0.
func specLiteral[T any](v T) (string, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		if rv.Bool() {
			return "1", nil
		}
		return "0", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Int64:
		n := rv.Int()
		if n == math.MinInt64 {
			return "(-9223372036854775807L-1)", nil
		}
		return strconv.FormatInt(n, 10) + "L", nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10) + "u", nil
	case reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10) + "UL", nil
	case reflect.Float32:
		f := rv.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("specialization constant literal: %w: %v", ErrInvalidArgument, f)
		}
		return strconv.FormatFloat(f, 'e', -1, 32) + "f", nil
	case reflect.Float64:
		f := rv.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", fmt.Errorf("specialization constant literal: %w: %v", ErrInvalidArgument, f)
		}
		return strconv.FormatFloat(f, 'e', -1, 64), nil
	}
	return "", fmt.Errorf("specialization constant literal: %w: %T is not a boolean or number", ErrInvalidArgument, v)
}

// Value returns the context's value of s: the value that launches on c
// that give s no value of their own run with from now on, the value set
// on c (Set or TuneDefault), else the default. Value(nil) returns the
// default; a constant that is not registered, or has neither a value nor
// a default, gives the zero value. A launch's own value (Spec) is not
// the context's, and inside a tuning function the candidate being timed
// is the value that Tune passes it, not Value's.
func (s *SpecConst[T]) Value(c *Context) T {
	var v T
	d := s.registration()
	if d == nil {
		return v
	}
	lit := d.Default
	if c != nil {
		for _, sv := range c.cache.pc.Specs() {
			if sv.Name == d.Name {
				lit = sv.Value
			}
		}
	}
	if lit == "" {
		return v
	}
	n, _, err := checkOf(d).parse(lit)
	if err != nil {
		return s.defaultValue()
	}
	setNum(reflect.ValueOf(&v).Elem(), n)
	return v
}

// specCheck is what a value of one registered specialization constant
// must satisfy.
type specCheck struct {
	name     string
	kind     reflect.Kind
	min, max *specNum // nil when not declared
	tune     []string // the candidates, canonical literals
}

// specNum is a parsed value: i for signed integers and booleans, u for
// unsigned integers, f for floats.
type specNum struct {
	i int64
	u uint64
	f float64
}

// specCheckCache holds the check of each descriptor, made at first use.
var specCheckCache sync.Map // *desc.SpecConst -> *specCheck

// checkOf returns the check of the constant d. The generator has checked
// its bounds and candidates; one that does not parse here (a hand-written
// descriptor) is left out rather than trusted.
func checkOf(d *desc.SpecConst) *specCheck {
	if c, ok := specCheckCache.Load(d); ok {
		return c.(*specCheck)
	}
	chk := &specCheck{name: d.Name, kind: d.Var.Kind}
	if d.Min != "" {
		if n, _, err := chk.parse(d.Min); err == nil {
			chk.min = &n
		}
	}
	if d.Max != "" {
		if n, _, err := chk.parse(d.Max); err == nil {
			chk.max = &n
		}
	}
	for _, c := range d.Tune {
		if canon, err := chk.check(c); err == nil {
			chk.tune = append(chk.tune, canon)
		}
	}
	c, _ := specCheckCache.LoadOrStore(d, chk)
	return c.(*specCheck)
}

// specChecks returns the checks of the constants named name.
func specChecks(name string) []*specCheck {
	var chks []*specCheck
	for _, d := range desc.SpecConstsNamed(name) {
		chks = append(chks, checkOf(d))
	}
	return chks
}

// checkRegistered returns value in canonical form (as specLiteral writes
// it) after checking it against every constant named name: an error wraps
// ErrInvalidArgument when no registered constant has the name or value
// does not parse as its type, ErrOutOfRange when it lies outside its
// bounds. Constants of one name but different types keep value as given.
func checkRegistered(name, value string) (string, error) {
	chks := specChecks(name)
	if len(chks) == 0 {
		return "", fmt.Errorf("%w: no //dgen:specconst declaration registers a constant named %q (a misspelling, or a package not generated)", ErrInvalidArgument, name)
	}
	canon := ""
	for i, chk := range chks {
		c, err := chk.check(value)
		if err != nil {
			return "", err
		}
		if i == 0 {
			canon = c
		} else if c != canon {
			canon = value
		}
	}
	return canon, nil
}

// check parses value as the constant's type and checks its bounds; it
// returns the canonical literal.
func (chk *specCheck) check(value string) (string, error) {
	n, canon, err := chk.parse(value)
	if err != nil {
		return "", err
	}
	if chk.min != nil && chk.less(n, *chk.min) {
		return "", fmt.Errorf("%w: %s=%s is below its minimum (min=%s)", ErrOutOfRange, chk.name, value, chk.format(*chk.min))
	}
	if chk.max != nil && chk.less(*chk.max, n) {
		return "", fmt.Errorf("%w: %s=%s is above its maximum (max=%s)", ErrOutOfRange, chk.name, value, chk.format(*chk.max))
	}
	return canon, nil
}

// less reports a < b in the constant's type.
func (chk *specCheck) less(a, b specNum) bool {
	switch {
	case isUnsigned(chk.kind):
		return a.u < b.u
	case isFloat(chk.kind):
		return a.f < b.f
	}
	return a.i < b.i
}

// format returns n as the canonical literal of the constant's type.
func (chk *specCheck) format(n specNum) string {
	v := reflect.New(chk.goType()).Elem()
	setNum(v, n)
	lit, _ := specLiteral(v.Interface())
	return lit
}

// goType returns the Go type of the kind; int64 for an unknown one.
func (chk *specCheck) goType() reflect.Type {
	if t, ok := kindTypes[chk.kind]; ok {
		return t
	}
	return reflect.TypeFor[int64]()
}

var kindTypes = map[reflect.Kind]reflect.Type{
	reflect.Bool: reflect.TypeFor[bool](), reflect.Int: reflect.TypeFor[int](), reflect.Int8: reflect.TypeFor[int8](),
	reflect.Int16: reflect.TypeFor[int16](), reflect.Int32: reflect.TypeFor[int32](), reflect.Int64: reflect.TypeFor[int64](),
	reflect.Uint: reflect.TypeFor[uint](), reflect.Uint8: reflect.TypeFor[uint8](), reflect.Uint16: reflect.TypeFor[uint16](),
	reflect.Uint32: reflect.TypeFor[uint32](), reflect.Uint64: reflect.TypeFor[uint64](), reflect.Uintptr: reflect.TypeFor[uintptr](),
	reflect.Float32: reflect.TypeFor[float32](), reflect.Float64: reflect.TypeFor[float64](),
}

func isUnsigned(k reflect.Kind) bool { return k >= reflect.Uint && k <= reflect.Uintptr }
func isFloat(k reflect.Kind) bool    { return k == reflect.Float32 || k == reflect.Float64 }

// parse reads value, an OpenCL C literal of the constant's type (as
// specLiteral writes it, or a plain Go number of the type), and returns it
// with its canonical literal; an error wraps ErrInvalidArgument.
func (chk *specCheck) parse(value string) (specNum, string, error) {
	t := chk.goType()
	bad := func(why string) (specNum, string, error) {
		return specNum{}, "", fmt.Errorf("%w: %s=%q is not a value of type %s%s", ErrInvalidArgument, chk.name, value, t, why)
	}
	s := strings.TrimSpace(value)
	if strings.Contains(s, "_") {
		return bad("")
	}
	var n specNum
	var err error
	switch {
	case chk.kind == reflect.Bool:
		switch s {
		case "1", "true":
			n.i = 1
		case "0", "false":
		default:
			return bad(" (want true, false, 1 or 0)")
		}
	case isFloat(chk.kind):
		s = strings.TrimSuffix(strings.TrimSuffix(s, "f"), "F")
		n.f, err = strconv.ParseFloat(s, t.Bits())
		if err == nil && (math.IsInf(n.f, 0) || math.IsNaN(n.f)) {
			return bad(" (not finite)")
		}
	case isUnsigned(chk.kind):
		s = strings.TrimRight(s, "uUlL")
		n.u, err = strconv.ParseUint(s, 0, t.Bits())
	default:
		if s == "(-9223372036854775807L-1)" {
			s = "-9223372036854775808"
		}
		s = strings.TrimRight(s, "lL")
		n.i, err = strconv.ParseInt(s, 0, t.Bits())
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return bad(" (out of its range)")
		}
		return bad("")
	}
	return n, chk.format(n), nil
}

// setNum stores n into v, a settable number or boolean.
func setNum(v reflect.Value, n specNum) {
	switch {
	case v.Kind() == reflect.Bool:
		v.SetBool(n.i != 0)
	case isUnsigned(v.Kind()):
		v.SetUint(n.u)
	case isFloat(v.Kind()):
		v.SetFloat(n.f)
	default:
		v.SetInt(n.i)
	}
}

// literalOfBits returns the value whose bits a launch carries (SpecArgs:
// the number at its own width in the word's first bytes in memory, as
// desc.ScalarBits stores it) as the constant's canonical literal, after
// checking it as check does: outside the bounds it is an error wrapping
// ErrOutOfRange, a float that is not finite one wrapping
// ErrInvalidArgument.
func (chk *specCheck) literalOfBits(bits uint64) (string, error) {
	p := unsafe.Pointer(&bits)
	var n specNum
	switch chk.kind {
	case reflect.Bool:
		if *(*uint8)(p) != 0 {
			n.i = 1
		}
	case reflect.Int8:
		n.i = int64(*(*int8)(p))
	case reflect.Int16:
		n.i = int64(*(*int16)(p))
	case reflect.Int32:
		n.i = int64(*(*int32)(p))
	case reflect.Int, reflect.Int64:
		n.i = *(*int64)(p)
	case reflect.Uint8:
		n.u = uint64(*(*uint8)(p))
	case reflect.Uint16:
		n.u = uint64(*(*uint16)(p))
	case reflect.Uint32:
		n.u = uint64(*(*uint32)(p))
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		n.u = bits
	case reflect.Float32:
		n.f = float64(*(*float32)(p))
	case reflect.Float64:
		n.f = *(*float64)(p)
	default:
		return "", fmt.Errorf("%w: %s is of kind %v, not a boolean or number", ErrInvalidArgument, chk.name, chk.kind)
	}
	if isFloat(chk.kind) && (math.IsInf(n.f, 0) || math.IsNaN(n.f)) {
		return "", fmt.Errorf("%w: %s=%v is not finite", ErrInvalidArgument, chk.name, n.f)
	}
	lit := chk.format(n)
	if _, err := chk.check(lit); err != nil {
		return "", err
	}
	return lit, nil
}
