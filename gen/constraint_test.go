package gen

import "testing"

func TestImplies(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"linux", "", true},
		{"", "linux", false},
		{"windows", "linux", false},
		{"linux && amd64", "linux", true},
		{"linux", "unix", true},
		{"unix", "linux", false},
		{"linux || darwin", "unix", true},
		{"linux && cgo", "cgo", true},
		{"linux", "linux && cgo", false},
		{"amd64", "!386", true},
		{"(linux) && amd64", "amd64", true},
		{"x && y", "x || y", true},
		{"x || y", "x && y", false},
	}
	for _, tt := range tests {
		if got := implies(tt.a, tt.b); got != tt.want {
			t.Errorf("implies(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
