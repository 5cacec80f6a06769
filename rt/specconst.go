package rt

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// SpecValue is the value of one specialization constant as a build sees
// it: the macro Name defined to Value (-D Name=Value). Value is an OpenCL C
// literal such as "16", "-3" or "0.5f"; SpecLiteral formats one.
type SpecValue struct {
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

// SetSpecValue sets the specialization constant name to value for every
// program that the context builds from now on. A name that no registered
// //dgen:specconst constant has, or a value that does not parse as the
// constant's type, is an error wrapping ErrInvalidArgument; a value outside
// the bounds the directive declares (min=, max=) one wrapping
// ErrOutOfRange. The value is kept as SpecLiteral writes it (so that "16"
// and "0x10" share a build) and becomes -D name=value
// at build and part of every cache key, so that a changed value builds
// (once) and caches another program, and setting an earlier value again
// finds the earlier program. Commands already enqueued are not affected.
// SetSpecConst, for a //dgen:specconst declaration, calls it with the
// constant's name and SpecLiteral of its value.
func (c *Context) SetSpecValue(name, value string) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if err := checkSpecValue(name, value); err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	canon, err := checkRegistered(name, value) // specvalue.go
	if err != nil {
		return fmt.Errorf("set specialization constant %s: %w", name, err)
	}
	c.pc.SetSpec(name, canon)
	return nil
}

// ClearSpecValue removes the value of the specialization constant name, so
// that programs see its default again. A name that no registered constant
// has is an error wrapping ErrInvalidArgument.
func (c *Context) ClearSpecValue(name string) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	if len(specChecks(name)) == 0 {
		return fmt.Errorf("clear specialization constant %s: %w: no //dgen:specconst declaration registers a constant of that name", name, ErrInvalidArgument)
	}
	c.pc.ClearSpec(name)
	return nil
}

// SpecValues returns the specialization-constant values set on the
// context, sorted by name.
func (c *Context) SpecValues() []SpecValue {
	if c == nil {
		return nil
	}
	set := c.pc.Specs()
	if len(set) == 0 {
		return nil
	}
	vals := make([]SpecValue, len(set))
	for i, v := range set {
		vals[i] = SpecValue(v)
	}
	return vals
}

// SpecLiteral formats v, a boolean or number, as the OpenCL C literal that
// SetSpecValue expects: integers in decimal (unsigned with a u suffix where
// needed), float32 with an f suffix and float64 in full precision, both
// exactly round-tripping; booleans as 1 or 0.
func SpecLiteral[T any](v T) (string, error) {
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
