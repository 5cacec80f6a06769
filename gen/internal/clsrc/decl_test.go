package clsrc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen/internal/cpp"
)

func unit(t testing.TB, src string) *Unit {
	r := cpp.Preprocess(&cpp.Config{Defines: cpp.OpenCL()}, "k.cl", []byte(src))
	if len(r.Errors) > 0 {
		t.Fatalf("preprocess: %v", r.Errors)
	}
	return ParseUnit(r.Tokens)
}

// sig spells a kernel's parameters as "name:type" with resolved types.
func sig(k *Kernel) string {
	var ps []string
	for _, p := range k.Params {
		ps = append(ps, p.Name+":"+p.Type.String())
	}
	return strings.Join(ps, " ")
}

func TestParseUnitSignatures(t *testing.T) {
	tests := []struct{ name, src, kernel, want string }{
		{"typedef chain", "typedef float DATA_TYPE; typedef DATA_TYPE real; typedef uint4 data_t;\n__kernel void k(__global real* a, data_t v, real s) {}",
			"k", "a:__global float* v:uint4 s:float"},
		{"macro types", "#define FPTYPE float\n#define LOCAL_PTR __local\n__kernel void k(__global FPTYPE* a, LOCAL_PTR FPTYPE* l, const FPTYPE x) {}",
			"k", "a:__global float* l:__local float* x:float"},
		{"attributes between directives", "#if 0\n__kernel\n#else\n__kernel __attribute__((reqd_work_group_size(64,1,1)))\n#endif\nvoid k(global const float* restrict a) __attribute__((vec_type_hint(float))) { }",
			"k", "a:__global const float*"},
		{"extern C guard", "#ifdef __cplusplus\nextern \"C\" {\n#endif\n__kernel void k(__constant int* c) {}\n#ifdef __cplusplus\n}\n#endif\n",
			"k", "c:__constant int*"},
		{"extern C block", "extern \"C\" {\n__kernel void k(int n) {}\n}\n", "k", "n:int"},
		{"ifdef inside parameters", "#define WITH_B\n__kernel void k(__global float* a\n#ifdef WITH_B\n, __global float* b\n#else\n, int c\n#endif\n) {}",
			"k", "a:__global float* b:__global float*"},
		{"alternative headers", "#ifdef X\n__kernel void k(int a) {\n#else\n__kernel void k(long a) {\n#endif\n}",
			"k", "a:long"},
		{"macro kernel", "#define COPY(T) __kernel void copy_##T(__global T* d, __global const T* s) { d[0] = s[0]; }\nCOPY(float) COPY(int)",
			"copy_int", "d:__global int* s:__global const int*"},
		{"multi-word and struct", "typedef struct { float x, y; } P; struct Q { int a; };\nkernel void k(unsigned int u, unsigned long long v, long int w, __global P* p, struct Q q, __global void* any) {}",
			"k", "u:uint v:ulong w:long p:__global P* q:struct Q any:__global void*"},
		{"void params", "__kernel void k(void) {}", "k", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := unit(t, tt.src)
			if len(u.Errors) > 0 {
				t.Fatal(u.Errors)
			}
			k := u.Kernel(tt.kernel)
			if k == nil {
				t.Fatalf("no kernel %s", tt.kernel)
			}
			if got := sig(k); got != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
	if u := unit(t, "#if 0\n__kernel void gone(int a) {}\n#endif\n"); u.Kernel("gone") != nil {
		t.Error("a kernel in an inactive branch is defined")
	}
}

// layoutString spells a struct's layout: "name@offset" for each member,
// then the size and alignment.
func layoutString(t *Type) string {
	var b strings.Builder
	for _, m := range t.Fields {
		fmt.Fprintf(&b, "%s@%d ", m.Name, m.Offset)
	}
	fmt.Fprintf(&b, "size %d align %d", t.Size, t.Align)
	return b.String()
}

// TestUnitErrors checks what ParseUnit refuses that the device compiler
// would refuse too.
func TestUnitErrors(t *testing.T) {
	tests := []struct{ name, src, want, kernels string }{
		{"twice", "__kernel void k(int a) {}\n__kernel void k(int b) {}\n", "k.cl:2:15: kernel k is defined twice (first at k.cl:1:15)", "k"},
		{"returns int", "__kernel int k(int a) { return a; }\n", "k.cl:1:14: kernel k returns int: a kernel function must return void", "k"},
		{"returns pointer", "__kernel void* k(int a) { return 0; }\n", "k.cl:1:16: kernel k returns void*: a kernel function must return void", "k"},
		{"prose before a kernel", "This header defines helpers\n__kernel void k(int a) {}\n", `k.cl:1:1: "This" is not OpenCL C: dgen cannot read a declaration here, up to the kernel at k.cl:2 (is the file C?)`, "k"},
		{"json before a kernel", "{\"a\": 1}\nkernel void k(int a) {}\n", `k.cl:1:1: "{" is not OpenCL C: no declaration starts with a brace (is the file C?)`, "k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := unit(t, tt.src)
			got := ""
			if len(u.Errors) > 0 {
				got = u.Errors[0].Error()
			}
			if got != tt.want {
				t.Errorf("error %q, want %q", got, tt.want)
			}
			var names []string
			for _, k := range u.Kernels {
				names = append(names, k.Name)
			}
			if strings.Join(names, " ") != tt.kernels {
				t.Errorf("kernels %v, want %s", names, tt.kernels)
			}
		})
	}
}

func TestLayouts(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"padding", "struct S { char c; int i; short s; };", "c@0 i@4 s@8 size 12 align 4"},
		{"float3 is 16", "struct S { float x; float3 v; float y; };", "x@0 v@16 y@32 size 48 align 16"},
		{"nested and arrays", "struct In { double d; char c; }; struct S { char a; struct In in[2]; int2 v; };", "a@0 in@8 v@40 size 48 align 8"},
		{"packed", "struct __attribute__((packed)) S { char c; int i; };", "c@0 i@1 size 5 align 1"},
		{"packed after", "struct S { char c; long l; } __attribute__((packed));", "c@0 l@1 size 9 align 1"},
		{"aligned", "struct S { char c; } __attribute__((aligned(16)));", "c@0 size 16 align 16"},
		{"aligned member", "struct S { char c; __attribute__((aligned(8))) int i; };", "c@0 i@8 size 16 align 8"},
		{"union", "union S { char c[5]; int i; };", "c@0 i@0 size 8 align 4"},
		{"array length expression", "#define N 4\nstruct S { float a[N * 2 + 1]; };", "a@0 size 36 align 4"},
		{"bool has no layout", "struct S { int a; bool b; };", "a@0 b@0 size 0 align 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := unit(t, tt.src)
			s := u.Tags["struct S"]
			if s == nil {
				s = u.Tags["union S"]
			}
			if s == nil {
				t.Fatalf("no S in %v", u.Tags)
			}
			if got := layoutString(s); got != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	u := unit(t, "typedef struct { bool b; } B;\n__kernel void k(float* p, __global float** pp, image2d_t img, __global B* b, size_t n, __local float4* l) {}")
	want := []string{
		"a kernel's pointer parameter must be __global, __constant or __local",
		"a pointer to a pointer cannot be a kernel argument",
		"type image2d_t is not supported as a kernel argument",
		"B has no host layout: member b has type bool",
		"type size_t is not supported as a kernel argument",
		"",
	}
	for i, p := range u.Kernel("k").Params {
		_, _, err := Classify(p.Type)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want[i] {
			t.Errorf("parameter %s: %q, want %q", p.Name, got, want[i])
		}
	}
}

func FuzzParseUnit(f *testing.F) {
	for _, s := range []string{
		"typedef struct { float x; } P; __kernel void k(__global P* p, int n) { p[n].x = 1; }",
		"struct __attribute__((packed)) S { char c[3]; union { int i; } u; } s;",
		"extern \"C\" { kernel void (*f)(int)[3]; }", "int a[(1+2)*3/0];", "__kernel void k(", "typedef",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r := cpp.Preprocess(&cpp.Config{}, "f.cl", []byte(src))
		u := ParseUnit(r.Tokens)
		for _, k := range u.Kernels {
			for _, p := range k.Params {
				Classify(p.Type)
				_ = p.Type.String()
			}
		}
	})
}
