package core

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		opts string
		bad  string // the option the error must quote; "" for valid
	}{
		{"", ""},
		{"-cl-mad-enable -cl-fast-relaxed-math", ""},
		{"-DN=4 -D M -D K=1 -I /usr/include -Iinc", ""},
		{"-cl-std=CL1.2 -cl-nv-verbose -w -Werror", ""},
		{"-D", "-D"},
		{"-D -cl-mad-enable", "-D"},
		{"-I", "-I"},
		{"-D=4", "-D=4"},
		{"-D 4N", "4N"},
		{"-DA-B", "-DA-B"},
		{"-cl-std=CL9", "-cl-std=CL9"},
		{"cl-mad-enable", "cl-mad-enable"},
		{"-cl-mad-enable -", "-"},
		{"-DSQ(x)=((x)*(x)) -DMAX(a,b)=((a)>(b)?(a):(b)) -DZERO()=0 -DV(f,...)=f(__VA_ARGS__) -D F(a)", ""},
		{"-DSQ(x", "-DSQ(x"},
		{"-DSQ(x)y", "-DSQ(x)y"},
		{"-DSQ(1)=1", "-DSQ(1)=1"},
		{"-DSQ(a,)=1", "-DSQ(a,)=1"},
		{"-DV(...,a)=1", "-DV(...,a)=1"},
		{"-D(x)=1", "-D(x)=1"},
	} {
		err := checkOptions(tc.opts, setCompileOptions.String())
		if tc.bad == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.opts, err)
			}
			continue
		}
		if !errors.Is(err, ErrBuildFailed) || !strings.Contains(err.Error(), `"`+tc.bad+`"`) || !strings.Contains(err.Error(), "DGEN_PROGRAM_COMPILE_OPTIONS") {
			t.Errorf("%q: error %v, want one wrapping ErrBuildFailed that quotes %q and names the variable", tc.opts, err, tc.bad)
		}
	}
}
