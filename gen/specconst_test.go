package gen

import (
	"go/types"
	"strings"
	"testing"
)

func TestParseSpecDefault(t *testing.T) {
	for _, c := range []struct {
		kind      types.BasicKind
		text      string
		goLit, cl string // cl "" for an error, whose text goLit holds
	}{
		{types.Int32, "16", "16", "16"},
		{types.Int32, "-3", "-3", "-3"},
		{types.Int32, "0x10", "16", "16"},
		{types.Int32, "2147483648", "overflows int32", ""},
		{types.Int8, "-128", "-128", "-128"},
		{types.Int8, "-129", "overflows int8", ""},
		{types.Uint8, "255", "255", "255u"},
		{types.Uint8, "-1", "overflows uint8", ""},
		{types.Uint64, "18446744073709551615", "18446744073709551615", "18446744073709551615UL"},
		{types.Int64, "5", "5", "5L"},
		{types.Int64, "-9223372036854775808", "-9223372036854775808", "(-9223372036854775807L-1)"},
		{types.Float32, "0.5", "0.5", "5e-01f"},
		{types.Float32, "2", "2", "2e+00f"},
		{types.Float32, "1e39", "overflows float32", ""},
		{types.Float64, "-1e300", "-1e+300", "-1e+300"},
		{types.Float64, "1e400", "overflows float64", ""},
		{types.Int32, "1.5", "not a constant of type int32", ""},
		{types.Int32, "--1", "not a constant", ""},
		{types.Int32, "+1", "not a constant", ""},
		{types.Int32, "", "not a constant", ""},
		{types.Int32, "x", "not a constant", ""},
		{types.Bool, "true", "true", "1"},
		{types.Bool, "1", "want true or false", ""},
	} {
		got, err := parseSpecDefault(c.text, types.Typ[c.kind])
		if c.cl == "" {
			if err == nil || !strings.Contains(err.Error(), c.goLit) {
				t.Errorf("%s %q: %v, %v; want an error with %q", types.Typ[c.kind], c.text, got, err, c.goLit)
			}
			continue
		}
		if err != nil || got.goLit != c.goLit || got.cl != c.cl {
			t.Errorf("%s %q = %q, %q, %v; want %q, %q", types.Typ[c.kind], c.text, got.goLit, got.cl, err, c.goLit, c.cl)
		}
	}
}

func FuzzParseSpecDefault(f *testing.F) {
	for _, s := range []string{"16", "-3", "0x10", "1e39", "0.5", "-", "1_000", "0b1", "'a'", "1i"} {
		f.Add(s)
	}
	kinds := []types.BasicKind{types.Int8, types.Uint16, types.Int32, types.Uint64, types.Int64, types.Float32, types.Float64, types.Bool}
	f.Fuzz(func(t *testing.T, text string) {
		for _, k := range kinds {
			v, err := parseSpecDefault(text, types.Typ[k])
			if err == nil && (v.goLit == "" || v.cl == "" || strings.ContainsAny(v.cl, " \t\n\"'\\")) {
				t.Fatalf("%s %q = %+v", types.Typ[k], text, v)
			}
		}
	})
}
