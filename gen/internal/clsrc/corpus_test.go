package clsrc

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen/internal/cpp"
	"github.com/dgen-go/dgen/internal/clcorpus"
)

// goSpelling spells the Go type of a kernel spec field for t, as the
// corpus's truth files do.
func goSpelling(t *Type) (string, error) {
	class, elem, err := Classify(t)
	if err != nil {
		return "", err
	}
	s := elem.Info.Go
	if elem.Kind == Struct || elem.Kind == Union {
		s = strings.TrimPrefix(strings.TrimPrefix(elem.Name, "struct "), "union ")
		if elem.Typedef != "" {
			s = elem.Typedef
		}
	}
	switch class {
	case ArgBuffer:
		return "rt.Buffer[" + s + "]", nil
	case ArgLocal:
		return "rt.Local[" + s + "]", nil
	}
	return s, nil
}

// TestCorpusSignatures reads every kernel of the corpus after
// preprocessing and compares each parameter's Go type with clang's.
func TestCorpusSignatures(t *testing.T) {
	files, err := clcorpus.Load()
	if errors.Is(err, clcorpus.ErrNoSourceTree) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	kernels := 0
	for _, f := range files {
		defs, dirs, err := cpp.ParseOptions(f.Options)
		if err != nil {
			t.Fatal(err)
		}
		r := cpp.Preprocess(&cpp.Config{Defines: append(cpp.OpenCL(), defs...), IncludeDirs: dirs}, f.Abs, []byte(f.Src))
		u := ParseUnit(r.Tokens)
		if len(r.Errors)+len(u.Errors) > 0 {
			t.Errorf("%s: %v %v", f.Path, r.Errors, u.Errors)
		}
		if len(u.Kernels) != len(f.Kernels) && f.OnPoCL() {
			t.Errorf("%s: %d kernels, clang sees %d", f.Path, len(u.Kernels), len(f.Kernels))
		}
		for _, tk := range f.Kernels {
			k := u.Kernel(tk.Name)
			if k == nil && !f.OnPoCL() {
				continue // not on this device, as on PoCL
			}
			if k == nil {
				t.Errorf("%s: no kernel %s", f.Path, tk.Name)
				continue
			}
			kernels++
			checkSignature(t, f.Path, k, tk)
		}
	}
	t.Logf("%d files, %d kernels checked", len(files), kernels)
}

// checkSignature compares the Go types of a kernel's parameters with
// clang's.
func checkSignature(t *testing.T, file string, k *Kernel, tk clcorpus.Kernel) {
	if len(k.Params) != len(tk.Params) {
		t.Errorf("%s: kernel %s has %d parameters, clang sees %d", file, tk.Name, len(k.Params), len(tk.Params))
		return
	}
	for i, tp := range tk.Params {
		got, err := goSpelling(k.Params[i].Type)
		switch {
		case tp.NoMap != nil:
			if err == nil {
				t.Errorf("%s: %s parameter %s: %s, clang: no mapping (%s)", file, tk.Name, tp.Name, got, *tp.NoMap)
			}
		case err != nil:
			t.Errorf("%s: %s parameter %s (%s): %v, clang: %s", file, tk.Name, tp.Name, k.Params[i].Text, err, *tp.Go)
		case got != *tp.Go:
			t.Errorf("%s: %s parameter %s (%s): %s, clang: %s", file, tk.Name, tp.Name, k.Params[i].Text, got, *tp.Go)
		}
	}
}
