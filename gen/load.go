// Package gen is dgen's generator as a library: it loads a package with
// go/packages, collects its //dgen: directives, checks them against the Go
// types and the OpenCL C sources, and emits zz_generated.dgen.go (and
// companion files for declarations in build-constrained or test files).
package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"
)

// RuntimePath is the import path of the runtime that generated code uses.
const RuntimePath = "github.com/dgen-go/dgen/rt"

// CodegenPath is the import path of the contract that generated code uses.
const CodegenPath = "github.com/dgen-go/dgen/rt/codegen"

// MainFile is the name of the generated file of a package.
const MainFile = "zz_generated.dgen.go"

// File is one generated file.
type File struct {
	Name    string // base name, in the package directory
	Content []byte
}

// isGenerated reports whether a base file name is one that dgen writes.
func isGenerated(name string) bool {
	return strings.HasPrefix(name, "zz_generated") && (strings.HasSuffix(name, ".dgen.go") || strings.HasSuffix(name, ".dgen_test.go"))
}

// srcFile is one Go file of the package with what is known about it.
type srcFile struct {
	path  string
	ast   *ast.File
	info  *types.Info // nil for a file outside the current build
	pkg   *types.Package
	test  bool
	build string // the build constraint of the companion, "" for none
}

// loaded is the package as the generator sees it.
type loaded struct {
	dir   string
	path  string // import path
	name  string // package name
	fset  *token.FileSet
	files []*srcFile
	scope *types.Scope // the package scope including internal test files
	// sizes are the target's (GOARCH's) sizes, for layouts; nil means
	// amd64's.
	sizes types.Sizes
	// typeErrs are the type errors of the package that the missing
	// generated code does not explain.
	typeErrs []typeError
}

// typeError is a type error of the package at its place.
type typeError struct {
	pos token.Position
	msg string
}

// load loads the package in dir, its test files and the files that build
// constraints exclude. Generated files are replaced by their package clause
// so that a stale or broken one cannot stop the load.
func load(dir string) (*loaded, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	overlay, err := generatedOverlay(abs)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedCompiledGoFiles | packages.NeedTypesSizes,
		Dir:     abs,
		Tests:   true,
		Fset:    fset,
		Overlay: overlay,
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	base, internal, external := classify(pkgs)
	if base == nil {
		return nil, fmt.Errorf("load %s: no Go package", dir)
	}
	if err := loadErrors(base, internal, external); err != nil {
		if ds := packageClauses(abs, base.GoFiles, base.Name); len(ds) > 0 {
			return nil, ds
		}
		if ds := encodings(abs, base, internal, external); len(ds) > 0 {
			return nil, ds
		}
		if ds := parseErrors(abs, base, internal, external); len(ds) > 0 {
			return nil, ds
		}
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	l := &loaded{dir: abs, path: base.PkgPath, name: base.Name, fset: fset, sizes: base.TypesSizes}
	l.typeErrs = hostTestErrors(cfg, typeErrors(base, internal, external))
	main := base
	if internal != nil {
		main = internal
	}
	l.scope = main.Types.Scope()
	seen := map[string]bool{}
	l.addFiles(main, seen)
	if external != nil {
		l.addFiles(external, seen)
	}
	if err := l.addIgnored(base, seen); err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	l.typeIgnored(cfg)
	sort.Slice(l.files, func(i, j int) bool { return l.files[i].path < l.files[j].path })
	return l, nil
}

// generatedOverlay replaces every generated file of the package directory
// by its package clause (and build constraints), so that a stale or broken
// one cannot stop the load.
func generatedOverlay(abs string) (map[string][]byte, error) {
	overlay := map[string][]byte{}
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if isGenerated(e.Name()) {
			p := filepath.Join(abs, e.Name())
			overlay[p] = generatedStub(abs, p)
		}
	}
	return overlay, nil
}

// generatedStub returns the package clause, with the build constraints, of
// a generated file; the package name is the user's files', not the stale
// file's. An unreadable file gets the plain clause.
func generatedStub(abs, p string) []byte {
	f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil || f.Name == nil {
		return []byte("package " + guessPackageName(abs) + "\n")
	}
	var b strings.Builder
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") {
				b.WriteString(c.Text + "\n\n")
			}
		}
	}
	name := guessPackageName(abs)
	if strings.HasSuffix(f.Name.Name, "_test") {
		name += "_test"
	}
	fmt.Fprintf(&b, "package %s\n", name)
	return []byte(b.String())
}

// classify finds the package, its variant with internal tests and its
// external test package among what go/packages loaded.
func classify(pkgs []*packages.Package) (base, internal, external *packages.Package) {
	for _, p := range pkgs {
		switch {
		case strings.HasSuffix(p.ID, ".test"):
		case strings.HasSuffix(p.PkgPath, "_test"):
			external = p
		case strings.Contains(p.ID, "["):
			internal = p
		default:
			base = p
		}
	}
	return base, internal, external
}

// loadErrors returns the errors that stop generation: type errors are
// expected while the generated methods are missing, and the declarations
// dgen needs still have their types.
func loadErrors(pkgs ...*packages.Package) error {
	var errs []error
	for _, p := range pkgs {
		if p == nil {
			continue
		}
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError || strings.HasPrefix(e.Msg, "# ") {
				continue
			}
			errs = append(errs, errors.New(e.Error()))
		}
	}
	return errors.Join(errs...)
}

// generatedNames matches the type errors that the generated code, stubbed
// out while dgen loads the package, explains: its methods (Enqueue,
// EnqueueEvent, AllocX) and its _dgen identifiers.
var generatedNames = regexp.MustCompile(`\b(has no field or method (Enqueue|EnqueueEvent|EnqueueContext|EnqueueEventContext|Alloc\w*)\b|undefined: _dgen)`)

// typeErrors returns the type errors of the package variants, each once,
// but those that the generated code explains: a package that does not
// compile for another reason would only fail after generation.
func typeErrors(pkgs ...*packages.Package) []typeError {
	var all []typeError
	for _, p := range pkgs {
		if p == nil {
			continue
		}
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError {
				all = append(all, typeError{pos: parsePos(e.Pos), msg: e.Msg})
			}
		}
	}
	return unexplained(all)
}

// hostTestErrors drops from errs the type errors of test files that
// only the target system has: go build does not build tests, and go test
// needs them to compile only where it runs, so a test that uses a symbol
// of a file for another system must not stop GOOS=darwin dgen on the
// Linux machine that runs the tests. When the target (GOOS, GOARCH) is not
// the host's and a test file has type errors, the package is loaded again
// for the host, and the test files' errors that it does not have are
// dropped.
func hostTestErrors(cfg *packages.Config, errs []typeError) []typeError {
	goos, goarch := os.Getenv("GOOS"), os.Getenv("GOARCH")
	if (goos == "" || goos == runtime.GOOS) && (goarch == "" || goarch == runtime.GOARCH) ||
		!slices.ContainsFunc(errs, func(e typeError) bool { return strings.HasSuffix(e.pos.Filename, "_test.go") }) {
		return errs
	}
	c := *cfg
	c.Fset = token.NewFileSet()
	c.Env = append(os.Environ(), "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	pkgs, err := packages.Load(&c, ".")
	if err != nil {
		return errs
	}
	host := map[string]bool{}
	for _, e := range typeErrors(classify(pkgs)) {
		host[e.pos.String()+e.msg] = true
	}
	return slices.DeleteFunc(errs, func(e typeError) bool {
		return strings.HasSuffix(e.pos.Filename, "_test.go") && !host[e.pos.String()+e.msg]
	})
}

// unexplained returns the type errors, each once, but those that the
// missing generated code explains: its methods and identifiers undefined
// (generatedNames), the errors that follow from those on the same line
// ("not enough arguments in call to f, have (unknown type)"), anything
// about an invalid or unknown type, which follows from an error reported
// elsewhere, and the continuations of a message ("\tother declaration of
// X").
func unexplained(all []typeError) []typeError {
	explained := map[string]bool{} // "file:line"
	line := func(e typeError) string { return fmt.Sprintf("%s:%d", e.pos.Filename, e.pos.Line) }
	for _, e := range all {
		if generatedNames.MatchString(e.msg) {
			explained[line(e)] = true
		}
	}
	var errs []typeError
	seen := map[string]bool{}
	for _, e := range all {
		key := e.pos.String() + e.msg
		switch {
		case strings.HasPrefix(e.msg, "\t"), explained[line(e)], seen[key],
			strings.Contains(e.msg, "(unknown type)"), strings.Contains(e.msg, "invalid type"):
			continue
		}
		seen[key] = true
		errs = append(errs, e)
	}
	return errs
}

// encodings reports, in each Go file of the package, the first byte that
// is not UTF-8 or is NUL: the Go parser's own message for it ("expected
// type, found 'ILLEGAL'") does not say what is wrong.
func encodings(abs string, pkgs ...*packages.Package) Diagnostics {
	var ds Diagnostics
	seen := map[string]bool{}
	for _, p := range pkgs {
		if p == nil {
			continue
		}
		for _, path := range append(slices.Clip(p.GoFiles), p.IgnoredFiles...) {
			if seen[path] || !strings.HasSuffix(path, ".go") {
				continue
			}
			seen[path] = true
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			if pos, msg := badByte(b); msg != "" {
				pos.Filename = relTo(abs, path)
				ds = append(ds, Diagnostic{Pos: pos, Msg: msg + " in Go source: save the file as UTF-8"})
			}
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].Pos.Filename < ds[j].Pos.Filename })
	return ds
}

// badByte returns the position and a description of the first NUL byte or
// byte that is not UTF-8 in b, "" for none.
func badByte(b []byte) (token.Position, string) {
	line, col := 1, 1
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == 0:
			return token.Position{Line: line, Column: col}, "NUL byte"
		case r == utf8.RuneError && n == 1:
			return token.Position{Line: line, Column: col}, fmt.Sprintf("invalid UTF-8 (byte %#02x)", b[i])
		case r == '\n':
			line, col = line+1, 0
		}
		i, col = i+n, col+n
	}
	return token.Position{}, ""
}

// parseErrors returns the syntax errors of the package as diagnostics.
func parseErrors(abs string, pkgs ...*packages.Package) Diagnostics {
	var ds Diagnostics
	seen := map[string]bool{}
	for _, p := range pkgs {
		if p == nil {
			continue
		}
		for _, e := range p.Errors {
			if e.Kind != packages.ParseError || seen[e.Pos+e.Msg] || e.Pos == "" || e.Pos == "-" {
				continue
			}
			seen[e.Pos+e.Msg] = true
			pos := parsePos(e.Pos)
			pos.Filename = relTo(abs, pos.Filename)
			ds = append(ds, Diagnostic{Pos: pos, Msg: e.Msg})
		}
	}
	return ds
}

// relTo returns path relative to dir in slash form when it is inside it.
func relTo(dir, path string) string {
	if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}

// addFiles adds the Go files of p that are not generated.
func (l *loaded) addFiles(p *packages.Package, seen map[string]bool) {
	for i, f := range p.Syntax {
		path := p.CompiledGoFiles[i]
		if seen[path] || isGenerated(filepath.Base(path)) {
			continue
		}
		seen[path] = true
		l.files = append(l.files, &srcFile{path: path, ast: f, info: p.TypesInfo, pkg: p.Types,
			test: strings.HasSuffix(path, "_test.go"), build: constraint(path, f)})
	}
}

// addIgnored parses the files of the package that build constraints
// exclude, without types.
func (l *loaded) addIgnored(base *packages.Package, seen map[string]bool) error {
	for _, path := range base.IgnoredFiles {
		if seen[path] || isGenerated(filepath.Base(path)) || !strings.HasSuffix(path, ".go") {
			continue
		}
		f, err := parser.ParseFile(l.fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name != base.Name && f.Name.Name != base.Name+"_test" {
			continue // a "package main" tool file and the like
		}
		l.files = append(l.files, &srcFile{path: path, ast: f, test: strings.HasSuffix(path, "_test.go"), build: constraint(path, f)})
	}
	return nil
}

func guessPackageName(dir string) string {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") && !isGenerated(e.Name()) && !strings.HasSuffix(e.Name(), "_test.go") {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.PackageClauseOnly)
			if err == nil {
				return f.Name.Name
			}
		}
	}
	return filepath.Base(dir)
}

var knownOS = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
	"hurd": true, "illumos": true, "ios": true, "js": true, "linux": true, "nacl": true, "netbsd": true,
	"openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true}

var knownArch = map[string]bool{"386": true, "amd64": true, "arm": true, "arm64": true, "loong64": true,
	"mips": true, "mipsle": true, "mips64": true, "mips64le": true, "ppc64": true, "ppc64le": true,
	"riscv64": true, "s390x": true, "wasm": true}

// constraint returns the build constraint of a file as one //go:build
// expression: its //go:build line and its _GOOS_GOARCH name suffix.
func constraint(path string, f *ast.File) string {
	var parts []string
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if expr, ok := strings.CutPrefix(c.Text, "//go:build "); ok {
				parts = append(parts, "("+strings.TrimSpace(expr)+")")
			}
		}
	}
	stem := strings.TrimSuffix(filepath.Base(path), ".go")
	stem = strings.TrimSuffix(stem, "_test")
	elems := strings.Split(stem, "_")
	n := len(elems)
	if n >= 3 && knownOS[elems[n-2]] && knownArch[elems[n-1]] {
		parts = append(parts, elems[n-2], elems[n-1])
	} else if n >= 2 && (knownOS[elems[n-1]] || knownArch[elems[n-1]]) {
		parts = append(parts, elems[n-1])
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], "(") {
		return strings.TrimSuffix(strings.TrimPrefix(parts[0], "("), ")")
	}
	return strings.Join(parts, " && ")
}

// packageClauses reports, at its package clause, each file of the build
// whose package is not the package's (go list names none of them).
func packageClauses(abs string, files []string, name string) Diagnostics {
	var ds Diagnostics
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly)
		if err != nil || f.Name.Name == name || f.Name.Name == name+"_test" {
			continue
		}
		p := fset.Position(f.Name.Pos())
		if rel, err := filepath.Rel(abs, p.Filename); err == nil {
			p.Filename = filepath.ToSlash(rel)
		}
		p.Offset = 0
		ds = append(ds, Diagnostic{Pos: p, Msg: fmt.Sprintf("package %s, but the other files of this directory are package %s: a directory holds one package", f.Name.Name, name)})
	}
	return ds
}

// typeIgnored gives types to the files of other systems that declare
// kernel specs, whose fields the generated Enqueue sets: each such file is
// loaded again with GOOS (and GOARCH) set from its name or build line.
// A file that does not load so keeps no types, as before.
func (l *loaded) typeIgnored(cfg *packages.Config) {
	for _, f := range l.files {
		if f.info != nil || !declaresKernel(f.ast) {
			continue
		}
		goos, goarch := platformOf(f.build)
		if goos == "" && goarch == "" {
			continue
		}
		c := *cfg
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		if goos != "" {
			c.Env = append(c.Env, "GOOS="+goos)
		}
		if goarch != "" {
			c.Env = append(c.Env, "GOARCH="+goarch)
		}
		pkgs, err := packages.Load(&c, ".")
		if err != nil {
			continue
		}
		for _, p := range pkgs {
			for i, path := range p.CompiledGoFiles {
				if path == f.path && i < len(p.Syntax) && p.TypesInfo != nil {
					f.ast, f.info, f.pkg = p.Syntax[i], p.TypesInfo, p.Types
				}
			}
		}
	}
}

// declaresKernel reports whether a file has a //dgen:kernel directive.
func declaresKernel(f *ast.File) bool {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//dgen:kernel") {
				return true
			}
		}
	}
	return false
}

// platformOf returns the GOOS and GOARCH that a build constraint of
// constraint's form names first, "" for none.
func platformOf(build string) (goos, goarch string) {
	for _, w := range strings.FieldsFunc(build, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		switch {
		case goos == "" && knownOS[w]:
			goos = w
		case goarch == "" && knownArch[w]:
			goarch = w
		}
	}
	return goos, goarch
}
