package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"runtime/debug"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen"
)

func init() {
	commands["generate"] = command{"generate for the package in the working directory (the default)", runGenerate}
	commands["markers"] = command{"print the reference of every //dgen: directive", runMarkers}
}

// runGenerate generates the package in the directory given by -C (default
// the working directory). Diagnostics go to stderr, one a line, and the
// exit status is 1; nothing is written then. With -check it writes nothing
// and lists on stdout what generating would change, exiting 1 if anything.
func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "package `directory`")
	check := fs.Bool("check", false, "write nothing; list what generating would change and exit 1 if anything")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	limitMemory()
	files, err := gen.Generate(*dir)
	if err == nil && *check {
		var changes []string
		if changes, err = gen.Diff(*dir, files); err == nil {
			for _, c := range changes {
				fmt.Fprintf(stdout, "%s: %s\n", *dir, c)
			}
			if len(changes) > 0 {
				fmt.Fprintf(stderr, "dgen -check: %s is stale: run go generate\n", *dir)
				return 1
			}
			return 0
		}
	}
	if err == nil && !*check {
		err = gen.Write(*dir, files)
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
