package clsrc

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

var counterGlobals = []Global{{"Counter", "uint"}, {"Params", "struct Params"}, {"Table", "float[16]"}, {"Unused", "int"}}

func TestRewrite(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		globals []Global
		want    string
		kernels []KernelGlobals
		used    []string
	}{
		{
			name:    "no globals used",
			src:     saxpy,
			globals: counterGlobals,
			want:    saxpy,
			kernels: []KernelGlobals{{Kernel: "saxpy", NumParams: 4}},
		},
		{
			name: "direct use, comments and strings untouched",
			src: `// Counter counts.
__kernel void bump(__global int *out) {
    /* Counter in a comment */ printf("Counter=%u\n", Counter);
    Counter += 1;
    out[0] = Params.scale * Table[3];
}
`,
			globals: counterGlobals,
			want: `// Counter counts.
__kernel void bump(__global int *out, __global uint* __dgen_g_Counter, __global struct Params* __dgen_g_Params, __global float* __dgen_g_Table) {
    /* Counter in a comment */ printf("Counter=%u\n", (*__dgen_g_Counter));
    (*__dgen_g_Counter) += 1;
    out[0] = (*__dgen_g_Params).scale * __dgen_g_Table[3];
}
`,
			kernels: []KernelGlobals{{Kernel: "bump", Globals: []string{"Counter", "Params", "Table"}, NumParams: 1}},
			used:    []string{"Counter", "Params", "Table"},
		},
		{
			name: "two levels of helpers, prototypes, (void) and ()",
			src: `uint next(void);
void add(uint n);

uint next(void) { return Counter++; }
void add(uint n) { Params.total += n; next(); }
float scale() { return Params.scale; }

__kernel void k1(__global uint *out) { add(out[0]); }
__kernel void k2(__global float *out) { out[0] = scale() + next(); }
__kernel void k3(void) { }
`,
			globals: counterGlobals,
			want: `uint next(__global uint* __dgen_g_Counter);
void add(uint n, __global uint* __dgen_g_Counter, __global struct Params* __dgen_g_Params);

uint next(__global uint* __dgen_g_Counter) { return (*__dgen_g_Counter)++; }
void add(uint n, __global uint* __dgen_g_Counter, __global struct Params* __dgen_g_Params) { (*__dgen_g_Params).total += n; next(__dgen_g_Counter); }
float scale(__global struct Params* __dgen_g_Params) { return (*__dgen_g_Params).scale; }

__kernel void k1(__global uint *out, __global uint* __dgen_g_Counter, __global struct Params* __dgen_g_Params) { add(out[0], __dgen_g_Counter, __dgen_g_Params); }
__kernel void k2(__global float *out, __global uint* __dgen_g_Counter, __global struct Params* __dgen_g_Params) { out[0] = scale(__dgen_g_Params) + next(__dgen_g_Counter); }
__kernel void k3(void) { }
`,
			kernels: []KernelGlobals{
				{Kernel: "k1", Globals: []string{"Counter", "Params"}, NumParams: 1},
				{Kernel: "k2", Globals: []string{"Counter", "Params"}, NumParams: 1},
				{Kernel: "k3", NumParams: 0},
			},
			used: []string{"Counter", "Params"},
		},
		{
			name: "shadowing by parameters and locals",
			src: `int f(int Counter) { return Counter; }
int g(void) {
    int x = Counter;
    {
        uint Counter = 3, y = Counter;
        x += Counter;
    }
    for (int Counter = 0; Counter < 2; Counter++) x += Counter;
    for (int i = 0; i < 2; i++) { struct Params Params; x += Params.n; }
    s.Counter = p->Counter;
    return x + Counter;
}
`,
			globals: counterGlobals,
			want: `int f(int Counter) { return Counter; }
int g(__global uint* __dgen_g_Counter) {
    int x = (*__dgen_g_Counter);
    {
        uint Counter = 3, y = Counter;
        x += Counter;
    }
    for (int Counter = 0; Counter < 2; Counter++) x += Counter;
    for (int i = 0; i < 2; i++) { struct Params Params; x += Params.n; }
    s.Counter = p->Counter;
    return x + (*__dgen_g_Counter);
}
`,
		},
		{
			name: "macros",
			src: `#define BUMP(by) Counter += (by)
#define TOTAL Params.total
#define NEXT() next_id()
#define SQ(Counter) ((Counter) * (Counter))
uint next_id(void) { return Counter++; }
__kernel void m1(int n) { BUMP(n); }
__kernel void m2(__global uint *o) { o[0] = TOTAL + SQ(2); }
__kernel void m3(__global uint *o) { o[0] = NEXT(); }
`,
			globals: counterGlobals,
			want: `#define BUMP(by) (*__dgen_g_Counter) += (by)
#define TOTAL (*__dgen_g_Params).total
#define NEXT() next_id(__dgen_g_Counter)
#define SQ(Counter) ((Counter) * (Counter))
uint next_id(__global uint* __dgen_g_Counter) { return (*__dgen_g_Counter)++; }
__kernel void m1(int n, __global uint* __dgen_g_Counter) { BUMP(n); }
__kernel void m2(__global uint *o, __global struct Params* __dgen_g_Params) { o[0] = TOTAL + SQ(2); }
__kernel void m3(__global uint *o, __global uint* __dgen_g_Counter) { o[0] = NEXT(); }
`,
			kernels: []KernelGlobals{
				{Kernel: "m1", Globals: []string{"Counter"}, NumParams: 1},
				{Kernel: "m2", Globals: []string{"Params"}, NumParams: 1},
				{Kernel: "m3", Globals: []string{"Counter"}, NumParams: 1},
			},
			used: []string{"Counter", "Params"},
		},
		{
			name: "recursion terminates",
			src: `int a(int n) { return n ? b(n - 1) : Counter; }
int b(int n) { return a(n); }
kernel void r(global int *o) { o[0] = b(3); }
`,
			globals: counterGlobals,
			want: `int a(int n, __global uint* __dgen_g_Counter) { return n ? b(n - 1, __dgen_g_Counter) : (*__dgen_g_Counter); }
int b(int n, __global uint* __dgen_g_Counter) { return a(n, __dgen_g_Counter); }
kernel void r(global int *o, __global uint* __dgen_g_Counter) { o[0] = b(3, __dgen_g_Counter); }
`,
			kernels: []KernelGlobals{{Kernel: "r", Globals: []string{"Counter"}, NumParams: 1}},
			used:    []string{"Counter"},
		},
		{
			name:    "order follows the globals list, not first use",
			src:     "kernel void o(global int *x) { x[0] = Table[0] + Counter; }\n",
			globals: []Global{{"Table", "float[16]"}, {"Counter", "uint"}},
			want:    "kernel void o(global int *x, __global float* __dgen_g_Table, __global uint* __dgen_g_Counter) { x[0] = __dgen_g_Table[0] + (*__dgen_g_Counter); }\n",
			kernels: []KernelGlobals{{Kernel: "o", Globals: []string{"Table", "Counter"}, NumParams: 1}},
			used:    []string{"Table", "Counter"},
		},
	}
	for _, tt := range tests {
		r, err := Rewrite([]byte(tt.src), tt.globals)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(r.Source) != tt.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, r.Source, tt.want)
		}
		if strings.Count(string(r.Source), "\n") != strings.Count(tt.src, "\n") {
			t.Errorf("%s: line count changed", tt.name)
		}
		if tt.kernels != nil && !reflect.DeepEqual(r.Kernels, tt.kernels) {
			t.Errorf("%s: kernels %+v, want %+v", tt.name, r.Kernels, tt.kernels)
		}
		if tt.kernels != nil && !reflect.DeepEqual(r.Globals, tt.used) {
			t.Errorf("%s: program globals %v, want %v", tt.name, r.Globals, tt.used)
		}
	}
}

func TestRewriteErrors(t *testing.T) {
	tests := []struct {
		src     string
		globals []Global
		want    string
	}{
		{"void Counter(void) {}", counterGlobals, "1:6: function Counter has the name of a device global"},
		{"#define Counter 3\n", counterGlobals, "1:9: macro Counter has the name of a device global"},
		{"void f(int __dgen_g_x) {}", counterGlobals, "1:12: identifier __dgen_g_x uses dgen's reserved prefix __dgen_g_"},
		{"void f( {}", counterGlobals, "1:7: unclosed ("},
		{"", []Global{{"a b", "int"}}, `device global name "a b" is not an OpenCL C identifier`},
		{"", []Global{{"A", "int"}, {"A", "int"}}, "device global A given twice"},
		{"", []Global{{"A", "int*"}}, `device global A: bad OpenCL C type "int*"`},
		{"", []Global{{"A", ""}}, `device global A: bad OpenCL C type ""`},
		{"", []Global{{"A", "int[2][2]"}}, "only one-dimensional"},
	}
	for _, tt := range tests {
		_, err := Rewrite([]byte(tt.src), tt.globals)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.src, err, tt.want)
		}
	}
	_, err := Rewrite([]byte("void Counter(void) {}"), counterGlobals)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || list[0].Pos.Line != 1 || list[0].Pos.Column != 6 {
		t.Errorf("errors.As(ErrorList) = %v", list)
	}
}

func TestImage(t *testing.T) {
	src := []byte("kernel void k(void) {}\n")
	if got := Image("", "", src); string(got) != string(src) {
		t.Errorf("Image without prelude or file name changed the source: %q", got)
	}
	if got, want := string(Image("", "k.cl", src)), "#line 1 \"k.cl\"\n"+string(src); got != want {
		t.Errorf("Image without prelude: got %q\nwant %q (a build log must name k.cl)", got, want)
	}
	decl, _, err := StructDecl("Params", []Field{{"scale", "float"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "struct Params {\n\tfloat scale; /* offset 0, size 4 */\n}; /* size 4, align 4 */\n#line 1 \"k.cl\"\nkernel void k(void) {}\n"
	if got := Image(decl, "k.cl", src); string(got) != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		saxpy, stencil, "#define A(x) Counter + x\nvoid f(){A(1);}", "void f( {", "/*", "\"", "'",
		"int a(int n){return b(n)+Counter;} int b(int n){return a(n);}",
		"kernel void k(void){ for(int Counter;;) Counter++; { float Counter; } Counter.x = Table[1]; }",
		"typedef struct { int a; } T; T f(T Counter) { T x = {0}; return x; }",
		"#define X \\\n Counter\n#include <x'>\nvoid f(){X;}", "a[)](}{", "\\\n#x", "f(g(h()))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, _ := Tokenize([]byte(src))
		for _, tk := range toks {
			if tk.Pos.Offset < 0 || tk.End > len(src) || tk.Pos.Offset >= tk.End || tk.Pos.Line < 1 || tk.Pos.Column < 1 {
				t.Fatalf("token %+v outside input of %d bytes", tk, len(src))
			}
		}
		file, err := Parse([]byte(src))
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse error %T is not an ErrorList", err)
			}
			for _, e := range list {
				if e.Pos.Offset < 0 || e.Pos.Offset > len(src) || e.Pos.Line < 1 || e.Pos.Column < 1 {
					t.Fatalf("error position %v outside input", e.Pos)
				}
			}
			return
		}
		for _, fn := range file.Functions {
			if fn.Pos.Offset < 0 || fn.Pos.Offset >= len(src) {
				t.Fatalf("function %s at %v outside input", fn.Name, fn.Pos)
			}
			for _, u := range fn.Uses("Counter", "Table") {
				if src[u.Pos.Offset:u.End] != u.Name {
					t.Fatalf("use %+v does not match the source", u)
				}
			}
		}
		r, err := file.Rewrite([]Global{{"Counter", "uint"}, {"Table", "float[4]"}})
		if err == nil && strings.Count(string(r.Source), "\n") != strings.Count(src, "\n") {
			t.Fatalf("rewriting changed the number of lines")
		}
	})
}

func TestUses(t *testing.T) {
	src := `typedef float4 vec;
#define ADD(Counter, y) (Counter + y + Table[0])
void f(__global int *Table) __attribute__((always_inline)) {
    vec Counter = (vec)(0);
    x = Counter.x + Table[1];
}
kernel void k(int n) {
    unsigned Counter2 = Counter;
    if (n) { vec Table; Table.x = 1; }
    else Table[n] = Counter;
}
`
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	show := func(us []Use) string {
		var parts []string
		for _, u := range us {
			parts = append(parts, u.Name+"@"+u.Pos.String())
		}
		return strings.Join(parts, " ")
	}
	if got := show(f.Function("f").Uses("Counter", "Table")); got != "" {
		t.Errorf("f: uses %s, want none (parameter and local shadow)", got)
	}
	if got, want := show(f.Function("k").Uses("Counter", "Table")), "Counter@8:25 Table@10:10 Counter@10:21"; got != want {
		t.Errorf("k: uses %s, want %s", got, want)
	}
	if got, want := show(f.Macro("ADD").Uses("Counter", "Table")), "Table@2:40"; got != want {
		t.Errorf("ADD: uses %s, want %s", got, want)
	}
	if fn := f.Function("f"); fn.Kernel || len(fn.Params) != 1 || !fn.HasBody {
		t.Errorf("f = %+v", fn)
	}
	if !f.Macro("ADD").FuncLike || !reflect.DeepEqual(f.Macro("ADD").Params, []string{"Counter", "y"}) {
		t.Errorf("ADD = %+v", f.Macro("ADD"))
	}
}
