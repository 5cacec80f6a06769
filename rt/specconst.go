package rt

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
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

// specSet is an immutable set of specialization-constant values, sorted by
// name, interned per context: equal sets are the same pointer, which the
// fast kernel cache compares.
type specSet struct {
	vals []SpecValue
	enc  string // canonical encoding
}

// encodeSpecs returns the canonical encoding of vals, sorted by name: for
// each value, its name and value, each preceded by its length as a uvarint.
func encodeSpecs(vals []SpecValue) string {
	var b []byte
	for _, v := range vals {
		b = binary.AppendUvarint(b, uint64(len(v.Name)))
		b = append(b, v.Name...)
		b = binary.AppendUvarint(b, uint64(len(v.Value)))
		b = append(b, v.Value...)
	}
	return string(b)
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
// program that the context builds from now on: value becomes -D name=value
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
	c.pc.specMu.Lock()
	defer c.pc.specMu.Unlock()
	cur := c.pc.spec.Load()
	vals := slices.Clone(cur.vals)
	i, found := slices.BinarySearchFunc(vals, name, func(v SpecValue, n string) int { return strings.Compare(v.Name, n) })
	if found {
		vals[i].Value = value
	} else {
		vals = slices.Insert(vals, i, SpecValue{name, value})
	}
	c.pc.spec.Store(c.pc.internSpecs(vals))
	return nil
}

// ClearSpecValue removes the value of the specialization constant name, so
// that programs see its default again.
func (c *Context) ClearSpecValue(name string) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	c.pc.specMu.Lock()
	defer c.pc.specMu.Unlock()
	cur := c.pc.spec.Load()
	vals := slices.DeleteFunc(slices.Clone(cur.vals), func(v SpecValue) bool { return v.Name == name })
	c.pc.spec.Store(c.pc.internSpecs(vals))
	return nil
}

// SpecValues returns the specialization-constant values set on the
// context, sorted by name.
func (c *Context) SpecValues() []SpecValue {
	if c == nil {
		return nil
	}
	return slices.Clone(c.pc.spec.Load().vals)
}

// internSpecs returns the interned set of vals (sorted); called with
// specMu held.
func (pc *progCache) internSpecs(vals []SpecValue) *specSet {
	enc := encodeSpecs(vals)
	if s, ok := pc.specSets[enc]; ok {
		return s
	}
	s := &specSet{vals: vals, enc: enc}
	pc.specSets[enc] = s
	return s
}

// resolve returns the values that a program using the constants uses sees:
// uses gives the constants with their defaults, which the context's values
// override; nil uses means every value set on the context.
func (s *specSet) resolve(uses []SpecValue) []SpecValue {
	if uses == nil {
		return s.vals
	}
	out := make([]SpecValue, 0, len(uses))
	for _, u := range uses {
		v := u
		if i, ok := slices.BinarySearchFunc(s.vals, u.Name, func(v SpecValue, n string) int { return strings.Compare(v.Name, n) }); ok {
			v.Value = s.vals[i].Value
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b SpecValue) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b SpecValue) bool { return a.Name == b.Name })
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
