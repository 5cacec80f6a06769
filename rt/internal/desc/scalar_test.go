package desc

import (
	"testing"
	"unsafe"
)

// punned returns v in the first bytes of a uint64's memory: what
// driver.Arg.Bits holds for a scalar argument.
func punned[T any](v T) uint64 {
	var bits uint64
	*(*T)(unsafe.Pointer(&bits)) = v
	return bits
}

// TestScalarBits checks that ScalarBits, which reads a number at its own
// width, gives the bytes of every scalar kind a kernel takes where the
// backends read them: in the first bytes of Bits.
func TestScalarBits(t *testing.T) {
	type rgb struct{ R, G, B uint8 }
	type pair struct{ A, B uint16 }
	tests := []struct {
		name      string
		got, want uint64
	}{
		{"int8", ScalarBits(int8(-2)), punned(int8(-2))},
		{"uint8", ScalarBits(uint8(0xab)), punned(uint8(0xab))},
		{"bool", ScalarBits(true), punned(true)},
		{"int16", ScalarBits(int16(-300)), punned(int16(-300))},
		{"int32", ScalarBits(int32(-70000)), punned(int32(-70000))},
		{"float32", ScalarBits(float32(-1.5)), punned(float32(-1.5))},
		{"int64", ScalarBits(int64(-1) << 40), punned(int64(-1) << 40)},
		{"float64", ScalarBits(3.25), punned(3.25)},
		{"[2]float32", ScalarBits([2]float32{1, -2}), punned([2]float32{1, -2})},
		{"struct of 3 bytes", ScalarBits(rgb{1, 2, 3}), punned(rgb{1, 2, 3})},
		{"struct of 4 bytes", ScalarBits(pair{0x1234, 0x5678}), punned(pair{0x1234, 0x5678})},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: ScalarBits = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}
