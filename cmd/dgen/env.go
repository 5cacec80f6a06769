package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/dgen-go/dgen/rt"
)

func init() {
	commands["env"] = command{"print every variable of the environment that dgen reads: its Config field, default and doc", runEnv}
}

// envHeader is what dgen env says before the table.
const envHeader = `The variables of the process environment that dgen reads (rt.EnvVars).
rt.Open reads the DGEN_ ones (rt.ConfigFromEnv); rt.OpenConfig reads none, and the
zero rt.Config is the defaults below. A boolean takes 1, true, on or yes, or 0,
false, off or no; a size, a number of bytes with an optional K, M, G or T (powers
of 1024: 512M, 1GiB); a duration, a Go duration (30s, 1m30s). A bad value fails
rt.Open with an error that names the variable and its field.
`

// runEnv is `dgen env`: the table of variables, as text or JSON.
func runEnv(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dgen env", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	vars := rt.EnvVars()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(vars); err != nil {
			fmt.Fprintf(stderr, "dgen env: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprint(stdout, envHeader)
	section := func(title string, keep func(rt.EnvVar) bool) {
		fmt.Fprintf(stdout, "\n%s\n", title)
		for _, v := range vars {
			if !keep(v) {
				continue
			}
			var where []string
			switch {
			case v.Library != "":
				where = append(where, "read by "+v.Library)
			case v.Deprecated != "":
				where = append(where, "deprecated: use "+v.Deprecated, "Config."+v.Field)
			default:
				where = append(where, "Config."+v.Field)
			}
			where = append(where, "default "+v.Default)
			fmt.Fprintf(stdout, "\n%s (%s)\n", v.Name, strings.Join(where, "; "))
			for _, line := range wrap(v.Doc, 76) {
				fmt.Fprintf(stdout, "    %s\n", line)
			}
		}
	}
	section("Settings:", func(v rt.EnvVar) bool { return v.Library == "" && v.Deprecated == "" })
	section("Old names, still read where the new one is unset (each said once):", func(v rt.EnvVar) bool { return v.Deprecated != "" })
	section("Variables of the driver libraries, which dgen reads (or sets) as the library does, whatever the Config says:",
		func(v rt.EnvVar) bool { return v.Library != "" })
	return 0
}

// wrap breaks s into lines of at most width bytes, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
