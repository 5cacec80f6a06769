package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/dgen-go/dgen/rt/trace"
)

// runTrace runs "dgen trace SUBCOMMAND": today only "summary FILE", which
// prints the per-source-location table of a trace that DGEN_TRACE's
// perfetto subscriber wrote.
func runTrace(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: dgen trace summary FILE\n\nsummary prints, per source location, the count and the total and mean\nhost and device times of the commands in FILE, a trace written with\nDGEN_TRACE=perfetto:FILE (device times with device=N or device=all), also\nthe file of a program that exited without closing its context.")
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "summary":
		fs := flag.NewFlagSet("dgen trace summary", flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.Usage = usage
		if err := fs.Parse(args[1:]); err != nil {
			return 2
		}
		if fs.NArg() != 1 {
			usage()
			return 2
		}
		if err := trace.SummarizeFile(fs.Arg(0), stdout); err != nil {
			fmt.Fprintf(stderr, "dgen trace summary: %v\n", err)
			return 1
		}
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, "usage: dgen trace summary FILE")
		return 0
	}
	fmt.Fprintf(stderr, "dgen trace: unknown subcommand %q\n", args[0])
	usage()
	return 2
}
