package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dgen-go/dgen/rt/devprof"
	"github.com/dgen-go/dgen/rt/trace"
)

const traceUsage = `usage: dgen trace summary FILE
       dgen trace json [-o OUT | -w] FILE
       dgen trace pprof [-o OUT] FILE

summary prints, per source location, the count and the total and mean
host and device times of the commands in FILE, a trace written with
DGEN_TRACE=perfetto:FILE or flight:FILE (device times with device=N or
device=all), also the file of a program that ended without closing its
context, and the number of events the writer dropped, if any.

json converts FILE to Chrome trace event JSON, which ui.perfetto.dev and
chrome://tracing open: a program writes its trace as records while it
runs and converts it when its context closes, so the file of a program
that ended otherwise (os.Exit, log.Fatal, a panic, SIGKILL), and the ring
of a flight recorder, are records. A JSON file is copied, its missing
closing bracket added. The JSON goes to standard output, to OUT with -o,
or back to FILE with -w.

pprof writes the profile of FILE in pprof's format (gzipped
profile.proto, package rt/devprof): device time and commands by the Go
line that enqueued them, device memory by allocation site. go tool pprof,
Pyroscope and Parca read it: dgen trace pprof FILE > gpu.pb.gz; go tool
pprof -top gpu.pb.gz. The profile goes to standard output, or to OUT
with -o.`

// runTrace runs "dgen trace SUBCOMMAND": "summary FILE", which prints the
// per-source-location table of a trace that DGEN_TRACE's perfetto or
// flight subscriber wrote, "json FILE", which converts such a file to
// Chrome trace event JSON, and "pprof FILE", which writes its profile in
// pprof's format.
func runTrace(args []string, stdout, stderr io.Writer) int {
	usage := func() { fmt.Fprintln(stderr, traceUsage) }
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
	case "json":
		return traceJSON(args[1:], stdout, stderr, usage)
	case "pprof":
		return tracePprof(args[1:], stdout, stderr, usage)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, traceUsage)
		return 0
	}
	fmt.Fprintf(stderr, "dgen trace: unknown subcommand %q\n", args[0])
	usage()
	return 2
}

// traceJSON runs "dgen trace json".
func traceJSON(args []string, stdout, stderr io.Writer, usage func()) int {
	fs := flag.NewFlagSet("dgen trace json", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage
	out := fs.String("o", "", "write the JSON to `OUT`")
	inPlace := fs.Bool("w", false, "replace FILE by the JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || (*out != "" && *inPlace) {
		usage()
		return 2
	}
	src := fs.Arg(0)
	dst := *out
	if *inPlace {
		dst = src
	}
	if dst != "" {
		if err := trace.ConvertFile(dst, src); err != nil {
			fmt.Fprintf(stderr, "dgen trace json: %v\n", err)
			return 1
		}
		return 0
	}
	data, err := os.ReadFile(src)
	if err == nil {
		bw := bufio.NewWriter(stdout)
		if err = trace.Convert(bw, data); err == nil {
			err = bw.Flush()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "dgen trace json: %s: %v\n", src, err)
		return 1
	}
	return 0
}

// tracePprof runs "dgen trace pprof".
func tracePprof(args []string, stdout, stderr io.Writer, usage func()) int {
	fs := flag.NewFlagSet("dgen trace pprof", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage
	out := fs.String("o", "", "write the profile to `OUT`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		usage()
		return 2
	}
	src := fs.Arg(0)
	data, err := os.ReadFile(src)
	if err != nil {
		fmt.Fprintf(stderr, "dgen trace pprof: %v\n", err)
		return 1
	}
	p, err := devprof.FromTrace(data)
	if err != nil {
		fmt.Fprintf(stderr, "dgen trace pprof: %s: %v\n", src, err)
		return 1
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		fmt.Fprintf(stderr, "dgen trace pprof: %v\n", err)
		return 1
	}
	if *out != "" {
		err = os.WriteFile(*out, buf.Bytes(), 0o644)
	} else {
		_, err = stdout.Write(buf.Bytes())
	}
	if err != nil {
		fmt.Fprintf(stderr, "dgen trace pprof: %v\n", err)
		return 1
	}
	return 0
}
