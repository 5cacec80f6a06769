package gen

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteMode checks that generated files get 0666 less the umask, as
// files that go generate writes usually do.
func TestWriteMode(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	if err := Write(dir, []File{{Name: MainFile, Content: []byte("package p\n")}}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, MainFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o644 {
		t.Errorf("mode %v, want -rw-r--r--", got)
	}
}

// writePackage writes a package that declares one program over src.cl,
// inside the module so that it imports rt.
func writePackage(t testing.TB) string {
	t.Helper()
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "pkg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := "package p\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=src.cl\nvar P rt.Program\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFIFOSource checks that a FIFO named as a source is refused, not
// read (which would block until a writer came).
func TestFIFOSource(t *testing.T) {
	dir := writePackage(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "src.cl"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Generate(dir); done <- err }()
	select {
	case err := <-done:
		var ds Diagnostics
		if !errors.As(err, &ds) || len(ds) != 1 || !strings.Contains(ds[0].Msg, "cannot read source src.cl: not a regular file") {
			t.Errorf("Generate = %v, want one diagnostic naming a non-regular file", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Generate blocked on a FIFO source")
	}
}

// TestSourceOutsideByLink checks that a source that is a symbolic link to a
// file outside the package directory is refused, as go:embed would refuse
// it; so is a header reached through a link in the package (the generated
// file would embed it), while a header outside, found through -I, is
// inlined and not embedded.
func TestSourceOutsideByLink(t *testing.T) {
	shared := t.TempDir()
	outside := filepath.Join(shared, "secret.cl")
	if err := os.WriteFile(outside, []byte("__kernel void k(int n) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, src, link, options, want string
	}{
		{"source", "", "src.cl", "", "outside the package directory"},
		{"header by link", "#include \"h.h\"\n", "h.h", "", "#include h.h: the header cannot be embedded in the generated file: h.h is a symbolic link"},
		{"header by -I", "#include \"secret.cl\"\n", "", "-I" + shared, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePackage(t)
			if tt.options != "" {
				src := "package p\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=src.cl options=" + strconv.Quote(tt.options) + "\nvar P rt.Program\n"
				if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.src != "" {
				if err := os.WriteFile(filepath.Join(dir, "src.cl"), []byte(tt.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link != "" {
				if err := os.Symlink(outside, filepath.Join(dir, tt.link)); err != nil {
					t.Skipf("symlink: %v", err)
				}
			}
			_, err := Generate(dir)
			var ds Diagnostics
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Generate = %v, want no error", err)
			case tt.want != "" && (!errors.As(err, &ds) || len(ds) != 1 || !strings.Contains(ds[0].Msg, tt.want)):
				t.Errorf("Generate = %v, want one diagnostic: %s", err, tt.want)
			}
		})
	}
}

// malformed writes a package whose source is n bytes of malformed OpenCL
// C, each line an error, and loads it.
func malformed(tb testing.TB, n int) *loaded {
	dir := writePackage(tb)
	line := "#error boom\n#if 1 +\n#endif\nstruct S { int x } ;\n__kernel void k(__global foo_t* a, ) {}\n"
	src := strings.Repeat(line, n/len(line)+1)
	if err := os.WriteFile(filepath.Join(dir, "src.cl"), []byte(src), 0o644); err != nil {
		tb.Fatal(err)
	}
	l, err := load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// check runs the phases of Generate that read the OpenCL C source.
func check(l *loaded) *state {
	s := newState(l)
	s.checkPrograms(s.checkDecls(s.collect()))
	s.sortDiags()
	return s
}

// TestMalformedLarge checks that a megabyte of malformed OpenCL C is
// diagnosed, capped, within the time any input may take (more under the
// race detector).
func TestMalformedLarge(t *testing.T) {
	l := malformed(t, 1<<20)
	start := time.Now()
	s := check(l)
	elapsed := time.Since(start)
	if n := len(s.diags); n != maxDiags+1 || s.diags[n-1].Msg != "too many errors" {
		t.Errorf("%d diagnostics %v; want %d, the last \"too many errors\"", n, s.diags, maxDiags+1)
	}
	// About 0.5 s on a quiet machine (BenchmarkMalformed measures it); the
	// bound is the goal for any input, 10 s, so that a loaded machine
	// does not fail it while a hang or a quadratic blow-up still does.
	if elapsed > raceSlowdown*10*time.Second {
		t.Errorf("checking 1 MB of malformed OpenCL C took %v, want under 10s", elapsed)
	}
}

// BenchmarkMalformed measures checking malformed OpenCL C of growing
// size: the time should grow linearly.
func BenchmarkMalformed(b *testing.B) {
	for _, kb := range []int{120, 240, 1024} {
		b.Run(strconv.Itoa(kb)+"KB", func(b *testing.B) {
			l := malformed(b, kb<<10)
			b.ResetTimer()
			for b.Loop() {
				check(l)
			}
		})
	}
}

// TestImageNamesRelative checks the names in the #line directives of a
// device image: a header found through a relative -I, in the module or
// outside it (a tree that holds several modules), is named relative to the
// package directory, so that the generated file is the same in every
// checkout; a header of an absolute -I directory by its own path.
func TestImageNamesRelative(t *testing.T) {
	dir := writePackage(t)
	inModule, err := os.MkdirTemp("testdata", "hdr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(inModule) })
	sibling, system := t.TempDir(), t.TempDir()
	absDir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	toSibling, err := filepath.Rel(absDir, sibling)
	if err != nil {
		t.Fatal(err)
	}
	options := "-I../" + filepath.Base(inModule) + " -I" + toSibling + " -I" + system
	files := map[string]string{
		filepath.Join(inModule, "in.h"): "#define IN 1\n",
		filepath.Join(sibling, "sib.h"): "#define SIB 1\n",
		filepath.Join(system, "sys.h"):  "#define SYS 1\n",
		filepath.Join(dir, "src.cl"):    "#include \"in.h\"\n#include \"sib.h\"\n#include \"sys.h\"\n__kernel void k(int n) {}\n",
		filepath.Join(dir, "p.go"): "package p\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=src.cl options=" +
			strconv.Quote(options) + "\nvar P rt.Program\n",
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	var main string
	for _, f := range out {
		if f.Name == MainFile {
			main = string(f.Content)
		}
	}
	for _, want := range []string{
		`#line 1 \"../` + filepath.Base(inModule) + `/in.h\"`,
		`#line 1 \"` + filepath.ToSlash(filepath.Join(toSibling, "sib.h")) + `\"`,
		`#line 1 \"` + filepath.Join(system, "sys.h") + `\"`,
		`#line 2 \"src.cl\"`,
	} {
		if !strings.Contains(main, want) {
			t.Errorf("generated file lacks %s", want)
		}
	}
	for _, checkout := range []string{absDir, sibling} {
		if strings.Contains(main, `\"`+checkout) {
			t.Errorf("generated file names %s, a path of this checkout", checkout)
		}
	}
}

// TestImageNamesAbsolute checks a header that an #include names by its
// absolute path, with no -I, and the header it includes beside itself:
// the image names both by their absolute paths whatever the depth of the
// package in the checkout, the generated file records their hashes
// (Outside, since go:embed cannot hold them), and an edit of one makes
// the generated file out of date, which dgen -check reports.
func TestImageNamesAbsolute(t *testing.T) {
	hdrs := t.TempDir()
	abs, beside := filepath.Join(hdrs, "abs.h"), filepath.Join(hdrs, "beside.h")
	for name, text := range map[string]string{abs: "#include \"beside.h\"\n", beside: "#define B 1\n"} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shallow := writePackage(t)
	deep := filepath.Join(shallow, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines [2][]string
	for i, dir := range []string{shallow, deep} {
		for name, text := range map[string]string{
			"src.cl": "#include " + strconv.Quote(abs) + "\n__kernel void k(int n) {}\n",
			"p.go":   "package p\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:program source=src.cl\nvar P rt.Program\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, err := Generate(dir)
		if err != nil {
			t.Fatal(err)
		}
		main := string(out[0].Content)
		for _, l := range strings.Split(main, `\n`) {
			if strings.HasPrefix(l, "#line") {
				lines[i] = append(lines[i], l)
			}
		}
		for _, want := range []string{
			`#line 1 \"` + abs + `\"`, `#line 1 \"` + beside + `\"`,
			"Name:    " + strconv.Quote(abs), "Name:    " + strconv.Quote(beside), "Outside: true",
		} {
			if !strings.Contains(main, want) {
				t.Errorf("the generated file of %s lacks %s:\n%s", dir, want, main)
			}
		}
		if i == 1 {
			break
		}
		if err := Write(dir, out); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(beside, []byte("#define B 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err = Generate(dir); err != nil {
			t.Fatal(err)
		}
		if changes, err := Diff(dir, out); err != nil || len(changes) != 1 || !strings.Contains(changes[0], "out of date") {
			t.Errorf("after an edit of beside.h, Diff (dgen -check) says %q, %v; want the generated file out of date", changes, err)
		}
	}
	if !slices.Equal(lines[0], lines[1]) {
		t.Errorf("the #line directives differ with the package's depth:\n%q\n%q", lines[0], lines[1])
	}
}
