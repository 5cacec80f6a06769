package gen

import (
	"fmt"
	"go/scanner"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Diagnostic is a problem found in the user's package, at a position in a
// Go or OpenCL C file. It is the one diagnostic type of the generator: the
// OpenCL C front end reports with it too. Error returns
// "file:line:col: message".
type Diagnostic = scanner.Error

// Diagnostics is every problem found in one run, sorted by position. It is
// returned as an error only when not empty.
type Diagnostics []Diagnostic

// Error returns the diagnostics, one a line.
func (ds Diagnostics) Error() string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

func (s *state) errorf(pos token.Pos, format string, args ...any) {
	p := s.l.fset.Position(pos)
	s.diag(p, fmt.Sprintf(format, args...))
}

// diag records a diagnostic, naming the file relative to the package
// directory when it is inside it.
func (s *state) diag(p token.Position, msg string) {
	p.Filename = s.rel(p.Filename)
	p.Offset = 0
	s.diags = append(s.diags, Diagnostic{Pos: p, Msg: msg})
}

// rel returns path relative to the package directory when it is inside it.
func (s *state) rel(path string) string {
	if rel, err := filepath.Rel(s.l.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}

// imageName returns the name of path in the #line directives of p's
// device image and in its sources: the path itself for a header named
// absolutely (absoluteHeaders), and otherwise the path relative to the
// package directory, so that the generated file is the same in every
// checkout of the tree: the package's own sources, and headers found
// beside them or through a relative -I, even outside the module.
func (s *state) imageName(p *front, path string) string {
	if p.absolute[path] {
		return path
	}
	if rel, err := filepath.Rel(s.l.dir, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// absoluteHeaders returns the headers of p that the image names by their
// absolute paths, which every machine keeps in the same place while a
// path relative to the package would change with the checkout's depth:
// a header that an #include names by an absolute path, one found under
// an -I directory that the options give as an absolute path (a system or
// SDK header), and one that such a header includes beside itself.
func absoluteHeaders(p *front, absDirs []string) map[string]bool {
	abs := map[string]bool{}
	for _, inc := range p.pp.Includes {
		if abs[inc.Path] {
			continue
		}
		beside := filepath.Clean(filepath.Join(filepath.Dir(inc.From), inc.Name)) == inc.Path
		abs[inc.Path] = filepath.IsAbs(inc.Name) || beside && abs[inc.From] ||
			slices.ContainsFunc(absDirs, func(d string) bool { return relTo(d, inc.Path) != inc.Path }) // inside d
	}
	return abs
}

func (s *state) sortDiags() {
	sort.SliceStable(s.diags, func(i, j int) bool {
		a, b := s.diags[i].Pos, s.diags[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	// A Go type compared with one OpenCL C type from two kernels is
	// reported once.
	s.diags = slices.Compact(s.diags)
	if len(s.diags) > maxDiags {
		last := s.diags[maxDiags-1].Pos
		s.diags = append(s.diags[:maxDiags], Diagnostic{Pos: last, Msg: "too many errors"})
	}
}

// maxDiags is how many diagnostics one run reports, the first in position
// order, before "too many errors", as the go command reports type errors.
const maxDiags = 50
