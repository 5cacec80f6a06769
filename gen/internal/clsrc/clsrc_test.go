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
		if got := err.Error(); got != tt.want {
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
			line += fmt.Sprintf("\n  %s %s as=%q const=%v ptr=%d type=%q text=%q", p.Pos, p.Name, p.AddrSpace, p.Const, p.Pointer, p.Type, p.Text)
		}
		for _, c := range fn.Calls {
			line += fmt.Sprintf("\n  call %s %s noargs=%v", c.Pos, c.Name, c.NoArgs)
		}
		got = append(got, line)
	}
	want := `2:15 saxpy kernel=true body=true ret="void"
  2:33 a as="" const=true ptr=0 type="float" text="const float a"
  3:52 x as="__global" const=true ptr=1 type="float" text="__global const float* restrict x"
  4:37 y as="__global" const=false ptr=1 type="float" text="__global float* y"
  5:40 n as="" const=true ptr=0 type="uint" text="const unsigned int n"
  call 7:16 get_global_id noargs=false
12:7 at kernel=false body=false ret="float"
  12:32 t as="__global" const=true ptr=1 type="float" text="__global const float* t"
  12:39 r as="" const=false ptr=0 type="int" text="int r"
  12:46 c as="" const=false ptr=0 type="int" text="int c"
  12:53 cols as="" const=false ptr=0 type="int" text="int cols"
15:6 stencil2d kernel=true body=true ret="void"
  15:38 in as="__global" const=true ptr=1 type="float" text="__global const float* in"
  15:58 out as="__global" const=false ptr=1 type="float" text="__global float* out"
  16:30 tile as="__local" const=false ptr=1 type="float" text="__local float tile[]"
  16:42 rows as="" const=false ptr=0 type="int" text="int rows"
  16:52 cols as="" const=false ptr=0 type="int" text="int cols"
  16:65 k as="" const=false ptr=0 type="Coeffs" text="Coeffs k"
  16:75 bias as="" const=false ptr=0 type="float4" text="float4 bias"
  16:87 dims as="" const=false ptr=0 type="uint2" text="uint2 dims"
  17:42 p as="__constant" const=false ptr=1 type="struct Params" text="__constant struct Params* p"
  17:54 n as="" const=false ptr=0 type="uint" text="unsigned n"
  17:62 big as="" const=false ptr=0 type="long" text="long big"
  17:73 small as="" const=false ptr=0 type="uchar" text="uchar small"
  17:87 d as="" const=false ptr=0 type="double" text="double d"
  call 19:13 get_global_id noargs=false
  call 19:35 get_global_id noargs=false
  call 20:10 get_local_id noargs=false
  call 20:36 get_local_id noargs=false
  call 20:55 at noargs=false
  call 21:5 barrier noargs=false
  call 22:49 at noargs=false
25:7 at kernel=false body=true ret="float"
  25:32 t as="__global" const=true ptr=1 type="float" text="__global const float* t"
  25:39 r as="" const=false ptr=0 type="int" text="int r"
  25:46 c as="" const=false ptr=0 type="int" text="int c"
  25:53 cols as="" const=false ptr=0 type="int" text="int cols"`
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

func TestGoArg(t *testing.T) {
	src := `kernel void k(global const float *a, __constant int *b, __local float4 *c,
	int d, uint e, long f, ulong g, float h, double i, char j, uchar k2, short l, ushort m,
	float3 n, int2 o, unsigned int p, struct S q, T r, global void *s, global struct S *t,
	float *u, global float **v, global int w, bool x, size_t y, image2d_t z, half hh, enum E ee) {}`
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.Functions[0].Params {
		a, err := p.GoArg()
		if err != nil {
			got = append(got, fmt.Sprintf("%s: error %v", p.Name, err))
			continue
		}
		got = append(got, fmt.Sprintf("%s: %s %s %q ro=%v size=%d", p.Name, a.Class, a.CLType, a.Go, a.ReadOnly, a.Info.Size))
	}
	want := `a: buffer float "float32" ro=true size=4
b: buffer int "int32" ro=true size=4
c: local memory float4 "[4]float32" ro=false size=16
d: value int "int32" ro=false size=4
e: value uint "uint32" ro=false size=4
f: value long "int64" ro=false size=8
g: value ulong "uint64" ro=false size=8
h: value float "float32" ro=false size=4
i: value double "float64" ro=false size=8
j: value char "int8" ro=false size=1
k2: value uchar "uint8" ro=false size=1
l: value short "int16" ro=false size=2
m: value ushort "uint16" ro=false size=2
n: value float3 "[4]float32" ro=false size=16
o: value int2 "[2]int32" ro=false size=8
p: value uint "uint32" ro=false size=4
q: value struct S "" ro=false size=0
r: value T "" ro=false size=0
s: buffer void "" ro=false size=0
t: buffer struct S "" ro=false size=0
u: error 4:9: parameter u (float* u): a kernel's pointer parameter must be __global, __constant or __local
v: error 4:27: parameter v (global float** v): a pointer to a pointer cannot be a kernel argument
w: error 4:41: parameter w (global int w): a __global parameter must be a pointer
x: error 4:49: parameter x (bool x): type bool is not supported as a kernel argument
y: error 4:59: parameter y (size_t y): type size_t is not supported as a kernel argument
z: error 4:72: parameter z (image2d_t z): type image2d_t is not supported as a kernel argument
hh: value half "uint16" ro=false size=2
ee: value enum E "int32" ro=false size=0`
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("got\n%s\nwant\n%s", g, want)
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
