package core

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/dgen-go/dgen/rt/internal/desc"
)

// TestLiteralOfBits: a launch's own value, carried as desc.ScalarBits
// stores it, becomes the literal that Set would give the same value, for
// every kind a constant may have; outside the bounds it is ErrOutOfRange,
// a float that is not finite ErrInvalidArgument.
func TestLiteralOfBits(t *testing.T) {
	check := func(kind reflect.Kind, min, max string) *specCheck {
		chk := &specCheck{name: "V", kind: kind}
		if min != "" {
			n, _, _ := chk.parse(min)
			chk.min = &n
		}
		if max != "" {
			n, _, _ := chk.parse(max)
			chk.max = &n
		}
		return chk
	}
	for _, tt := range []struct {
		kind     reflect.Kind
		bits     uint64
		min, max string
		want     string
		err      error
	}{
		{reflect.Int8, desc.ScalarBits(int8(-5)), "", "", "-5", nil},
		{reflect.Int16, desc.ScalarBits(int16(-300)), "", "", "-300", nil},
		{reflect.Int32, desc.ScalarBits(int32(128)), "1", "4096", "128", nil},
		{reflect.Int32, desc.ScalarBits(int32(5000)), "1", "4096", "", ErrOutOfRange},
		{reflect.Int32, desc.ScalarBits(int32(0)), "1", "4096", "", ErrOutOfRange},
		{reflect.Int64, desc.ScalarBits(int64(math.MinInt64)), "", "", "(-9223372036854775807L-1)", nil},
		{reflect.Int, desc.ScalarBits(int(-7)), "", "", "-7", nil},
		{reflect.Uint8, desc.ScalarBits(uint8(200)), "", "", "200u", nil},
		{reflect.Uint16, desc.ScalarBits(uint16(65535)), "", "", "65535u", nil},
		{reflect.Uint32, desc.ScalarBits(uint32(7)), "", "6u", "", ErrOutOfRange},
		{reflect.Uint64, desc.ScalarBits(uint64(math.MaxUint64)), "", "", "18446744073709551615UL", nil},
		{reflect.Float32, desc.ScalarBits(float32(0.5)), "", "", "5e-01f", nil},
		{reflect.Float32, desc.ScalarBits(float32(math.Inf(1))), "", "", "", ErrInvalidArgument},
		{reflect.Float64, desc.ScalarBits(-2.25), "-4", "4", "-2.25e+00", nil},
		{reflect.Float64, desc.ScalarBits(math.NaN()), "", "", "", ErrInvalidArgument},
	} {
		got, err := check(tt.kind, tt.min, tt.max).literalOfBits(tt.bits)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("%v %#x (min %q, max %q) = %q, %v; want %q, %v", tt.kind, tt.bits, tt.min, tt.max, got, err, tt.want, tt.err)
		}
	}
}
