package clsrc

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen/internal/cpp"
)

const corpusDir = "../../../../shared/cl-corpus"

type truthFile struct {
	File    string `json:"file"`
	Kernels []struct {
		Name   string `json:"name"`
		Params []struct {
			Name  string  `json:"name"`
			Go    *string `json:"go"`
			NoMap *string `json:"nomap"`
		} `json:"params"`
	} `json:"kernels"`
}

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
	truths, _ := filepath.Glob(filepath.Join(corpusDir, "truth", "*.json"))
	if len(truths) == 0 {
		t.Skipf("no corpus at %s: it lives in the shared folder beside the module", corpusDir)
	}
	opts := map[string]string{}
	if f, err := os.Open(filepath.Join(corpusDir, "OPTIONS.tsv")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if path, o, ok := strings.Cut(sc.Text(), "\t"); ok {
				opts[path] = o
			}
		}
		f.Close()
	}
	kernels := 0
	for _, tp := range truths {
		b, err := os.ReadFile(tp)
		if err != nil {
			t.Fatal(err)
		}
		var truth truthFile
		if err := json.Unmarshal(b, &truth); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(corpusDir, truth.File)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defs, dirs, err := cpp.ParseOptions(strings.ReplaceAll(opts[truth.File], "@DIR@", filepath.Dir(path)))
		if err != nil {
			t.Fatal(err)
		}
		r := cpp.Preprocess(&cpp.Config{Defines: append(cpp.OpenCL(), defs...), IncludeDirs: dirs}, path, src)
		u := ParseUnit(r.Tokens)
		if len(r.Errors)+len(u.Errors) > 0 {
			t.Errorf("%s: %v %v", truth.File, r.Errors, u.Errors)
		}
		if len(u.Kernels) != len(truth.Kernels) && !needsExtension(src) {
			t.Errorf("%s: %d kernels, clang sees %d", truth.File, len(u.Kernels), len(truth.Kernels))
		}
		for _, tk := range truth.Kernels {
			k := u.Kernel(tk.Name)
			if k == nil && needsExtension(src) {
				continue // not on this device, as on PoCL
			}
			if k == nil {
				t.Errorf("%s: no kernel %s", truth.File, tk.Name)
				continue
			}
			kernels++
			if len(k.Params) != len(tk.Params) {
				t.Errorf("%s: kernel %s has %d parameters, clang sees %d", truth.File, tk.Name, len(k.Params), len(tk.Params))
				continue
			}
			for i, tp := range tk.Params {
				got, err := goSpelling(k.Params[i].Type)
				switch {
				case tp.NoMap != nil:
					if err == nil {
						t.Errorf("%s: %s parameter %s: %s, clang: no mapping (%s)", truth.File, tk.Name, tp.Name, got, *tp.NoMap)
					}
				case err != nil:
					t.Errorf("%s: %s parameter %s (%s): %v, clang: %s", truth.File, tk.Name, tp.Name, k.Params[i].Text, err, *tp.Go)
				case got != *tp.Go:
					t.Errorf("%s: %s parameter %s (%s): %s, clang: %s", truth.File, tk.Name, tp.Name, k.Params[i].Text, got, *tp.Go)
				}
			}
		}
	}
	t.Logf("%d files, %d kernels checked", len(truths), kernels)
}

// needsExtension reports whether a source's kernels depend on an extension
// that clang's SPIR target defines but PoCL's CPU device and the predefined
// macros of cpp.OpenCL do not: half precision, integer dot products.
func needsExtension(src []byte) bool {
	return strings.Contains(string(src), "defined(cl_khr_fp16)") || strings.Contains(string(src), "defined(cl_khr_integer_dot_product)")
}
