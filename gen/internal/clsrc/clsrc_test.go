package clsrc

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	src := "#define N 4 \\\n  /* two\nlines */ + 1\n" +
		"  # pragma x\n" +
		"kernel void f(global float *a) { // c\n" +
		"  a[0] = 1.5e-3f + 'x' + sizeof(\"s\\\"/*\"); a->b <<= 0x1Fu; }\n"
	toks, err := Tokenize([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, fmt.Sprintf("%s %s %q", tk.Pos, tk.Kind, tk.Text))
	}
	want := []string{
		`1:1 preprocessor line "#define N 4 \\\n  /* two\nlines */ + 1"`,
		`4:3 preprocessor line "# pragma x"`,
		`5:1 identifier "kernel"`, `5:8 identifier "void"`, `5:13 identifier "f"`, `5:14 punctuation "("`,
		`5:15 identifier "global"`, `5:22 identifier "float"`, `5:28 punctuation "*"`, `5:29 identifier "a"`,
		`5:30 punctuation ")"`, `5:32 punctuation "{"`, `5:34 comment "// c"`,
		`6:3 identifier "a"`, `6:4 punctuation "["`, `6:5 number "0"`, `6:6 punctuation "]"`, `6:8 punctuation "="`,
		`6:10 number "1.5e-3f"`, `6:18 punctuation "+"`, `6:20 char "'x'"`, `6:24 punctuation "+"`,
		`6:26 identifier "sizeof"`, `6:32 punctuation "("`, `6:33 string "\"s\\\"/*\""`, `6:40 punctuation ")"`,
		`6:41 punctuation ";"`, `6:43 identifier "a"`, `6:44 punctuation "->"`, `6:46 identifier "b"`,
		`6:48 punctuation "<<="`, `6:52 number "0x1Fu"`, `6:57 punctuation ";"`, `6:59 punctuation "}"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"kernel void f() { /* open\n }", "1:17: unclosed {\n1:19: unterminated /* comment"},
		{"void f() {\n  x = \"abc;\n}", "2:7: unterminated string literal"},
		{"void f() {\n  x = 'a;\n}", "2:7: unterminated character literal"},
		{"void f( {\n}", "1:7: unclosed ("},
		{"void f() {\n  g(1));\n}", "2:7: unexpected ), want } to close { at 1:10"},
		{"void f() }", "1:10: unbalanced }"},
		{"void f() {\n  a[1);\n}", "2:4: unclosed [\n2:6: unexpected ), want ] to close [ at 2:4"},
		{"void f() { x = 1 @ 2; }", "1:18: unexpected byte '@'"},
		{"#define S \"abc\nvoid f() {}", "1:11: unterminated string literal"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.src))
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("%q: got %v, want errors", tt.src, err)
			continue
		}
		var lines []string
		for _, e := range list {
			lines = append(lines, e.Error())
		}
		if got := strings.Join(lines, "\n"); got != tt.want {
			t.Errorf("%q:\ngot  %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

const saxpy = `// saxpy: y = a*x + y
__kernel void saxpy(const float a,
                    __global const float* restrict x,
                    __global float *y,
                    const unsigned int n)
{
    size_t i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}
`

const stencil = `#define BLOCK 16
typedef struct { float k0, k1; } Coeffs;
float at(__global const float *t, int r, int c, int cols);

__kernel __attribute__((reqd_work_group_size(BLOCK, BLOCK, 1)))
void stencil2d(__global const float *in, __global float *out,
               __local float tile[], int rows, int cols, Coeffs k, float4 bias, uint2 dims,
               __constant struct Params *p, unsigned n, long big, uchar small, double d)
{
    int r = get_global_id(0), c = get_global_id(1);
    tile[get_local_id(0) * BLOCK + get_local_id(1)] = at(in, r, c, cols);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[r * cols + c] = k.k0 * tile[0] + k.k1 * at(in, r + 1, c, cols) + bias.x;
}

float at(__global const float *t, int r, int c, int cols) { return t[r * cols + c]; }
`

func TestParseFunctions(t *testing.T) {
	f, err := Parse([]byte(saxpy + stencil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fn := range f.Functions {
		line := fmt.Sprintf("%s %s kernel=%v body=%v ret=%q", fn.Pos, fn.Name, fn.Kernel, fn.HasBody, fn.Return)
		for _, p := range fn.Params {
			line += fmt.Sprintf("\n  %s %s text=%q", p.Pos, p.Name, p.Text)
		}
		for _, c := range fn.Calls {
			line += fmt.Sprintf("\n  call %s %s noargs=%v", c.Pos, c.Name, c.NoArgs)
		}
		got = append(got, line)
	}
	want := `2:15 saxpy kernel=true body=true ret="void"
  2:33 a text="const float a"
  3:52 x text="__global const float* restrict x"
  4:37 y text="__global float* y"
  5:40 n text="const unsigned int n"
  call 7:16 get_global_id noargs=false
12:7 at kernel=false body=false ret="float"
  12:32 t text="__global const float* t"
  12:39 r text="int r"
  12:46 c text="int c"
  12:53 cols text="int cols"
15:6 stencil2d kernel=true body=true ret="void"
  15:38 in text="__global const float* in"
  15:58 out text="__global float* out"
  16:30 tile text="__local float tile[]"
  16:42 rows text="int rows"
  16:52 cols text="int cols"
  16:65 k text="Coeffs k"
  16:75 bias text="float4 bias"
  16:87 dims text="uint2 dims"
  17:42 p text="__constant struct Params* p"
  17:54 n text="unsigned n"
  17:62 big text="long big"
  17:73 small text="uchar small"
  17:87 d text="double d"
  call 19:13 get_global_id noargs=false
  call 19:35 get_global_id noargs=false
  call 20:10 get_local_id noargs=false
  call 20:36 get_local_id noargs=false
  call 20:55 at noargs=false
  call 21:5 barrier noargs=false
  call 22:49 at noargs=false
25:7 at kernel=false body=true ret="float"
  25:32 t text="__global const float* t"
  25:39 r text="int r"
  25:46 c text="int c"
  25:53 cols text="int cols"`
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("got\n%s\nwant\n%s", g, want)
	}
	if !reflect.DeepEqual(f.Typedefs, []string{"Coeffs"}) {
		t.Errorf("typedefs %v", f.Typedefs)
	}
	if m := f.Macro("BLOCK"); m == nil || m.FuncLike || m.Pos.String() != "10:9" {
		t.Errorf("macro BLOCK = %+v", m)
	}
	if fn := f.Function("at"); fn == nil || !fn.HasBody {
		t.Errorf("Function(at) = %+v, want the definition", fn)
	}
	if ks := f.Kernels(); len(ks) != 2 || ks[0].Name != "saxpy" || ks[1].Name != "stencil2d" {
		t.Errorf("Kernels() = %v", ks)
	}
}

func TestTypes(t *testing.T) {
	tests := []struct {
		name        string
		size, align int
		goT         string
	}{
		{"char", 1, 1, "int8"}, {"uchar", 1, 1, "uint8"}, {"short", 2, 2, "int16"}, {"int", 4, 4, "int32"},
		{"uint", 4, 4, "uint32"}, {"long", 8, 8, "int64"}, {"ulong", 8, 8, "uint64"},
		{"float", 4, 4, "float32"}, {"double", 8, 8, "float64"}, {"half", 2, 2, "uint16"},
		{"float2", 8, 8, "[2]float32"}, {"float3", 16, 16, "[4]float32"}, {"float4", 16, 16, "[4]float32"},
		{"int3", 16, 16, "[4]int32"}, {"double3", 32, 32, "[4]float64"}, {"char16", 16, 16, "[16]int8"},
		{"ulong8", 64, 64, "[8]uint64"}, {"unsigned int", 4, 4, "uint32"}, {"unsigned  char", 1, 1, "uint8"},
	}
	for _, tt := range tests {
		info, ok := LookupType(tt.name)
		if !ok || info.Size != tt.size || info.Align != tt.align || info.Go != tt.goT {
			t.Errorf("LookupType(%q) = %+v, %v", tt.name, info, ok)
		}
	}
	for _, bad := range []string{"float5", "float03", "bool", "size_t", "floaty", "", "int1", "struct S"} {
		if _, ok := LookupType(bad); ok {
			t.Errorf("LookupType(%q) succeeded", bad)
		}
	}
	all := Types()
	if len(all) != 11*6 {
		t.Errorf("Types() has %d entries, want 66", len(all))
	}
	for _, ti := range all {
		if got, ok := LookupType(ti.Name); !ok || got != ti {
			t.Errorf("Types() entry %+v disagrees with LookupType: %+v", ti, got)
		}
	}
}

func TestLayoutAndStructDecl(t *testing.T) {
	inner, err := StructLayout([]Field{{"a", "char"}, {"b", "double"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if inner.Size != 16 || inner.Align != 8 {
		t.Errorf("inner = %+v", inner)
	}
	decl, l, err := StructDecl("Params", []Field{
		{"scale", "float"}, {"dir", "float3"}, {"n", "uint"}, {"in", "struct Inner"}, {"w", "short[3]"}, {"m", "int2[2][2]"},
	}, map[string]*Layout{"struct Inner": inner})
	if err != nil {
		t.Fatal(err)
	}
	want := `struct Params {
	float scale; /* offset 0, size 4 */
	float3 dir; /* offset 16, size 16 */
	uint n; /* offset 32, size 4 */
	struct Inner in; /* offset 40, size 16 */
	short w[3]; /* offset 56, size 6 */
	int2 m[2][2]; /* offset 64, size 32 */
}; /* size 96, align 16 */
`
	if decl != want {
		t.Errorf("got\n%s\nwant\n%s", decl, want)
	}
	if l.Size != 96 || l.Align != 16 || l.Fields[3].Offset != 40 {
		t.Errorf("layout %+v", l)
	}
	for _, bad := range [][]Field{
		nil,
		{{"a", "bool"}},
		{{"a", "size_t"}},
		{{"a", "struct Unknown"}},
		{{"a", "int"}, {"a", "int"}},
		{{"1a", "int"}},
		{{"a", "int[0]"}},
		{{"a", "int[x]"}},
		{{"a", "int[2"}},
		{{"a", "char[2147483647][2147483647]"}},
	} {
		if _, err := StructLayout(bad, nil); err == nil {
			t.Errorf("StructLayout(%v) succeeded", bad)
		}
	}
	if _, _, err := StructDecl("bad name", []Field{{"a", "int"}}, nil); err == nil {
		t.Error("StructDecl accepted a bad name")
	}
}
