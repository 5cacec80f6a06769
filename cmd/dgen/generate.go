package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen"
)

func init() {
	commands["generate"] = command{"generate for the package in the working directory (the default)", runGenerate}
	commands["markers"] = command{"print the reference of every //dgen: directive", runMarkers}
}

// runGenerate generates the package in the directory given by -C (default
// the working directory), or, given package patterns (./...), every package
// they match that declares //dgen: directives or holds a generated file.
// Diagnostics go to stderr, one a line, and the exit status is 1; nothing is
// written for a package with diagnostics. With -check it writes nothing and
// lists on stdout what generating would change, exiting 1 if anything.
func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "package `directory`")
	check := fs.Bool("check", false, "write nothing; list what generating would change and exit 1 if anything")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	limitMemory()
	dirs := []string{*dir}
	if fs.NArg() > 0 {
		var err error
		if dirs, err = packageDirs(*dir, fs.Args()); err != nil {
			fmt.Fprintf(stderr, "dgen: %v\n", err)
			return 1
		}
	}
	status := 0
	for _, d := range dirs {
		if s := generateDir(d, *check, stdout, stderr); s > status {
			status = s
		}
	}
	return status
}

// generateDir generates, or with check compares, the package in dir, and
// returns the exit status runGenerate documents.
func generateDir(dir string, check bool, stdout, stderr io.Writer) int {
	files, err := gen.Generate(dir)
	if err == nil && check {
		var changes []string
		if changes, err = gen.Diff(dir, files); err == nil {
			for _, c := range changes {
				fmt.Fprintf(stdout, "%s: %s\n", dir, c)
			}
			if len(changes) > 0 {
				fmt.Fprintf(stderr, "dgen -check: %s is stale: run go generate\n", dir)
				return 1
			}
			return 0
		}
	}
	if err == nil && !check {
		err = gen.Write(dir, files)
	}
	if err != nil {
		var ds gen.Diagnostics
		if errors.As(err, &ds) {
			for _, d := range ds {
				fmt.Fprintln(stderr, d)
			}
		} else {
			fmt.Fprintf(stderr, "dgen: %v\n", err)
		}
		return 1
	}
	return 0
}

// packageDirs returns the directories of the packages that patterns match,
// resolved from dir as the go command resolves them, keeping those that
// dgen generates for: a Go file in the directory runs dgen with a
// //go:generate line, or a file dgen generated is there.
func packageDirs(dir string, patterns []string) ([]string, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles, Dir: dir}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var dirs []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, e)
		}
		if len(p.GoFiles) == 0 {
			continue
		}
		d := filepath.Dir(p.GoFiles[0])
		if seen[d] {
			continue
		}
		seen[d] = true
		if ok, err := generatedByDgen(d); err != nil {
			return nil, err
		} else if ok {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no package that %s matches runs dgen from a //go:generate line", strings.Join(patterns, " "))
	}
	return dirs, nil
}

// generatedByDgen reports whether a Go file of dir (its tests' and
// build-constrained ones' included) runs dgen from a //go:generate line, or
// dir holds a file dgen generated.
func generatedByDgen(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") {
			continue
		}
		if strings.HasPrefix(name, "zz_generated") && strings.HasSuffix(name, ".dgen.go") {
			return true, nil
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return false, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if runsDgen(line) {
				return true, nil
			}
		}
	}
	return false, nil
}

// runsDgen reports whether line is a //go:generate line that runs dgen:
// the command itself, go run of its package, or go tool dgen.
func runsDgen(line string) bool {
	cmd, ok := strings.CutPrefix(line, "//go:generate ")
	if !ok {
		return false
	}
	for _, w := range strings.Fields(cmd) {
		if w == "dgen" || strings.HasSuffix(w, "/cmd/dgen") || strings.HasSuffix(w, "/cmd/dgen@latest") {
			return true
		}
	}
	return false
}

// memoryLimit is the soft limit of dgen's heap (GOMEMLIMIT overrides it):
// the garbage collector works harder near it, so that the largest input
// dgen accepts (gen.MaxSourceSize) keeps the process under a gigabyte.
const memoryLimit = 768 << 20

// limitMemory sets memoryLimit unless GOMEMLIMIT sets a limit, which the
// runtime has read (a negative limit asks for the current one).
func limitMemory() {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(memoryLimit)
	}
}

func runMarkers(args []string, stdout, stderr io.Writer) int {
	fmt.Fprint(stdout, annotations.Reference())
	return 0
}
