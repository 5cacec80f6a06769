package envconf

import (
	"testing"
	"time"
)

func TestBool(t *testing.T) {
	tests := []struct {
		in        string
		value, ok bool
	}{
		{"1", true, true}, {"true", true, true}, {" On ", true, true}, {"YES", true, true}, {"y", true, true},
		{"0", false, true}, {"False", false, true}, {"off", false, true}, {"no", false, true},
		{"", false, false}, {"maybe", false, false}, {"2", false, false},
	}
	for _, tt := range tests {
		if v, ok := Bool(tt.in); v != tt.value || ok != tt.ok {
			t.Errorf("Bool(%q) = %v, %v; want %v, %v", tt.in, v, ok, tt.value, tt.ok)
		}
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "10": 10, "1k": 1024, "3MB": 3 << 20, "1GiB": 1 << 30, "2T": 2 << 40, " 512KB ": 512 << 10, "-1": -1, "-2K": -2048} {
		if got, err := Size(in); err != nil || got != want {
			t.Errorf("Size(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "-", "--1", "+1", "1e3", "99999999999T", "lots"} {
		if _, err := Size(in); err == nil {
			t.Errorf("Size(%q) accepted", in)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"2s", 2 * time.Second, true},
		{" 500ms ", 500 * time.Millisecond, true},
		{"1m30s", 90 * time.Second, true},
		{"0s", 0, true},
		{"-1s", -time.Second, true},
		{"2", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		got, err := Duration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Duration(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
