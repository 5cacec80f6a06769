// Package envconf is the one grammar of dgen's DGEN_ environment
// variables: every boolean, size and duration is parsed here, so that a value
// that one variable accepts, every variable of its kind accepts.
package envconf

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// Bool parses a boolean, ignoring case and surrounding space: 1, t, true,
// on, yes and y are true; 0, f, false, off, no and n are false. ok is false
// for anything else.
func Bool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "on", "yes", "y":
		return true, true
	case "0", "f", "false", "off", "no", "n":
		return false, true
	}
	return false, false
}

// BoolSyntax describes what Bool accepts, for error messages.
const BoolSyntax = "want 1, true, on or yes, or 0, false, off or no"

// Size parses a size in bytes: a decimal number of bytes, optionally
// followed by K, M, G or T (powers of 1024), which may be followed by B or
// iB ("64M", "1GiB", "512KB"), ignoring case and surrounding space. A
// minus sign is taken ("-1"), so that the setting's own check, which a
// value from Go code passes too, refuses a negative size with the same
// error.
func Size(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	neg := strings.HasPrefix(t, "-")
	if neg {
		t = t[1:]
	}
	t = strings.TrimSuffix(t, "IB")
	t = strings.TrimSuffix(t, "B")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift != 0 {
			t = t[:n-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || t == "" || t[0] == '+' {
		return 0, errors.New("want a size in bytes with an optional K, M, G or T suffix")
	}
	if n > (1<<62)>>shift {
		return 0, errors.New("size too large")
	}
	if neg {
		return -(n << shift), nil
	}
	return n << shift, nil
}

// Duration parses a Go duration ("2s", "500ms", "1m30s"), ignoring
// surrounding space. A negative one is taken, for the setting's own check
// to refuse as it refuses one from Go code.
func Duration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, errors.New(DurationSyntax)
	}
	return d, nil
}

// DurationSyntax describes what Duration accepts, for error messages.
const DurationSyntax = "want a duration such as 2s, 500ms or 1m30s"
