// Package clcorpus reads the corpus of OpenCL C written by others that
// dgen's tests use (testdata/, see its README.md): its files, the build
// options of each, and clang's view of every kernel.
package clcorpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Param is a kernel parameter as clang sees it.
type Param struct {
	Name string `json:"name"`
	// Go is the Go type a user declares for it; nil without one.
	Go *string `json:"go"`
	// NoMap says why the parameter has no Go mapping; nil when it has one.
	NoMap *string `json:"nomap"`
}

// Kernel is a kernel as clang sees it.
type Kernel struct {
	Name   string  `json:"name"`
	Params []Param `json:"params"`
}

// Mappable reports whether every parameter has a Go mapping.
func (k Kernel) Mappable() bool {
	for _, p := range k.Params {
		if p.NoMap != nil || p.Go == nil {
			return false
		}
	}
	return true
}

// File is one .cl file of the corpus with clang's view of it.
type File struct {
	Path    string                `json:"file"` // relative to the corpus
	Kernels []Kernel              `json:"kernels"`
	Structs map[string][][]string `json:"structs"` // Go fields (name, type) of each C struct
	// Abs is the file's absolute path; Src its text; Options the build
	// options its project passes, with @DIR@ replaced.
	Abs, Src, Options string
}

// OnPoCL reports whether the file's kernels exist on PoCL's CPU device:
// clang's view defines every extension, PoCL has no half precision and no
// integer dot products.
func (f *File) OnPoCL() bool {
	return !strings.Contains(f.Src, "defined(cl_khr_fp16)") && !strings.Contains(f.Src, "defined(cl_khr_integer_dot_product)")
}

// ErrNoSourceTree reports that the tests run outside dgen's source tree (a
// test binary copied to another machine), where the corpus is absent; tests
// skip then, and fail on any other error of Load.
var ErrNoSourceTree = errors.New("not in dgen's source tree, which holds the corpus")

// Dir returns the corpus directory: $DGEN_CL_CORPUS where set (a larger
// corpus of the same layout), else this package's testdata, found from the
// working directory up to the module root. Outside a source tree (a test
// binary run elsewhere) it returns an error wrapping ErrNoSourceTree.
func Dir() (string, error) {
	if d := os.Getenv("DGEN_CL_CORPUS"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "OPTIONS.tsv")); err != nil {
			return "", fmt.Errorf("DGEN_CL_CORPUS: %w", err)
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			c := filepath.Join(dir, "internal", "clcorpus", "testdata")
			if _, err := os.Stat(c); err != nil {
				return "", fmt.Errorf("the corpus is missing from the source tree: %w", err)
			}
			return c, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: no go.mod above the working directory", ErrNoSourceTree)
		}
		dir = parent
	}
}

// Load reads every file of the corpus that has a truth file, in the order
// of the truth files' names.
func Load() ([]*File, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	opts, err := options(dir)
	if err != nil {
		return nil, err
	}
	truths, err := filepath.Glob(filepath.Join(dir, "truth", "*.json"))
	if err != nil {
		return nil, err
	}
	var files []*File
	for _, tp := range truths {
		b, err := os.ReadFile(tp)
		if err != nil {
			return nil, err
		}
		f := &File{}
		if err := json.Unmarshal(b, f); err != nil {
			return nil, fmt.Errorf("%s: %w", tp, err)
		}
		f.Abs = filepath.Join(dir, filepath.FromSlash(f.Path))
		src, err := os.ReadFile(f.Abs)
		if err != nil {
			return nil, err
		}
		f.Src = string(src)
		f.Options = strings.ReplaceAll(opts[f.Path], "@DIR@", filepath.Dir(f.Abs))
		files = append(files, f)
	}
	return files, nil
}

// options reads OPTIONS.tsv: build options by file.
func options(dir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, "OPTIONS.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opts := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if path, o, ok := strings.Cut(sc.Text(), "\t"); ok {
			opts[path] = o
		}
	}
	return opts, sc.Err()
}
