// Command dgen generates the registration and access code for a package's
// //dgen: directives, and explores the runtime's devices and caches.
//
// Usage:
//
//	dgen                  generate for the package in the working directory (as go generate runs it)
//	dgen -check [packages] write nothing; list what generating would change, exit 1 if anything (for CI)
//	dgen [packages]       generate for every package the patterns (./...) match that uses //dgen: directives
//	dgen devices [-json]  list every platform and device, and the one DGEN_DEVICE picks
//	dgen markers          print the reference of every //dgen: directive
//	dgen env [-json]      print every variable of the environment that dgen reads, with its Config field, default and doc
//	dgen trace summary FILE
//	                      print the per-source-location table of a trace written with DGEN_TRACE=perfetto:FILE
//	dgen trace json [-o OUT | -w] FILE
//	                      convert a trace file (the records of a program that did not close its context too) to Chrome JSON
//	dgen trace pprof [-o OUT] FILE
//	                      write the profile of a trace file in pprof's format: device time by Go caller, memory by site
//	dgen cache ls|stat|verify|clear|gc [-json]
//	                      explore and manage the persistent program cache
//	dgen help             print this summary
//
// dgen is pure Go: it builds with CGO_ENABLED=0, and go generate needs
// neither OpenCL nor a C compiler. Listing devices loads OpenCL through cgo,
// so only a dgen built with cgo (the default where gcc is installed) has
// dgen devices; one built without says so, and how to get it.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// A command is one subcommand of dgen.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"trace": {"summary FILE: print the per-source-location table of a written trace; json FILE: convert it to Chrome JSON; pprof FILE: write its profile in pprof's format", runTrace},
	"cache": {"explore and manage the persistent program cache: ls, stat, verify, clear, gc", runCache},
}

// devicesSummary is the help line of dgen devices, which a build with cgo
// implements (devices.go) and a build without it explains (devices_nocgo.go).
const devicesSummary = "list every platform and device, and the one DGEN_DEVICE picks (needs cgo and OpenCL)"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if gen, ok := commands["generate"]; ok {
			return gen.run(args, stdout, stderr)
		}
		usage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "dgen: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dgen [command] [arguments]\n\nWith no command, dgen generates code for the package in the working directory.\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
