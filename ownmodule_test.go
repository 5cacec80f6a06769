package dgen_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guide is docs/OWN-MODULE.md, the guide that TestOwnModule follows.
const guide = "docs/OWN-MODULE.md"

// A step of the guide: a fenced block that an HTML comment before it
// marks ("<!-- test: file scale.go -->", "<!-- test tools: run install -->").
type step struct {
	variant string // "" for the main path, "tools" for the tools.go pattern
	kind    string // file, run, output, error or generate
	arg     string // the file's name, or "install" for the run block that requires dgen
	text    string
}

var marker = regexp.MustCompile(`^<!-- test( \w+)?: (\w+)( [^ ]+)? -->$`)

// readGuide returns the marked blocks of the guide, in order.
func readGuide(t *testing.T) []step {
	t.Helper()
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	var cur *step
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inBlock && strings.HasPrefix(line, "```"):
			inBlock = false
			if cur != nil {
				steps = append(steps, *cur)
				cur = nil
			}
		case inBlock:
			if cur != nil {
				cur.text += line + "\n"
			}
		case strings.HasPrefix(line, "```"):
			inBlock = true
		default:
			if m := marker.FindStringSubmatch(line); m != nil {
				cur = &step{variant: strings.TrimSpace(m[1]), kind: m[2], arg: strings.TrimSpace(m[3])}
			}
		}
	}
	if len(steps) == 0 {
		t.Fatalf("%s has no marked blocks", guide)
	}
	return steps
}

// path returns the steps of a variant: the main path's, where the variant
// replaces the install block, adds its files and changes the
// //go:generate line.
func path(steps []step, variant string) []step {
	var own []step
	for _, s := range steps {
		if s.variant == variant && variant != "" {
			own = append(own, s)
		}
	}
	var out []step
	for _, s := range steps {
		if s.variant != "" {
			continue
		}
		for _, v := range own {
			switch {
			case v.kind == "run" && v.arg == s.arg && s.kind == "run" && s.arg == "install":
				s = v
			case v.kind == "generate" && s.kind == "file":
				re := regexp.MustCompile(`(?m)^//go:generate .*\n`)
				s.text = re.ReplaceAllString(s.text, v.text)
			}
		}
		out = append(out, s)
		if s.kind == "run" && s.arg == "install" {
			for _, v := range own {
				if v.kind == "file" {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// TestOwnModule follows docs/OWN-MODULE.md in a scratch module beside a
// link to this checkout, as a new user would: go mod init, the replace,
// go get -tool, the files of the guide, go generate, go run; then the
// tools.go pattern the guide describes; then a kernel with a mistake,
// whose error must name the user's file and line, in the .cl file and in
// a header it includes, with nothing from the driver on standard error
// before it. It needs no network: dgen's dependencies come from the
// module cache (GOPROXY=off), which go mod download in the checkout fills
// first where it is cold, as make test's go commands would.
func TestOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module from scratch")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	checkout, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	steps := readGuide(t)
	if out, err := exec.Command(goCmd, "mod", "download").CombinedOutput(); err != nil {
		t.Fatalf("go mod download in the checkout: %v\n%s", err, out)
	}
	for _, variant := range []string{"", "tools"} {
		name := variant
		if name == "" {
			name = "tool"
		}
		t.Run(name, func(t *testing.T) {
			m := newScratch(t, goCmd, checkout)
			var want string
			for _, s := range path(steps, variant) {
				switch s.kind {
				case "file":
					m.write(t, s.arg, s.text)
				case "run":
					want = ""
					for _, line := range strings.Split(strings.TrimSpace(s.text), "\n") {
						want = m.sh(t, line)
					}
				case "output":
					pat := regexp.QuoteMeta(strings.TrimSpace(s.text))
					pat = strings.ReplaceAll(pat, "<device>", ".+")
					if !regexp.MustCompile(pat).MatchString(want) {
						t.Errorf("go run printed %q; the guide says %q", want, strings.TrimSpace(s.text))
					}
				}
			}
			if variant == "" {
				m.brokenKernel(t, steps)
			}
		})
	}
}

// scratch is a module under construction in a temporary directory.
type scratch struct {
	dir string // the module: <tmp>/hello, beside <tmp>/dgen, a link to the checkout
	env []string
	goC string
}

func newScratch(t *testing.T, goCmd, checkout string) *scratch {
	tmp := t.TempDir()
	if err := os.Symlink(checkout, filepath.Join(tmp, "dgen")); err != nil {
		t.Skipf("cannot link the checkout: %v", err)
	}
	dir := filepath.Join(tmp, "hello")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local",
		"DGEN_CACHE_DIR="+filepath.Join(tmp, "cache"))
	return &scratch{dir: dir, env: env, goC: goCmd}
}

func (m *scratch) write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(m.dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sh runs one command line of the guide (a go command) and returns its
// standard output; it fails the test if the command fails.
func (m *scratch) sh(t *testing.T, line string) string {
	t.Helper()
	stdout, stderr, err := m.run(t, line)
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", line, err, stdout, stderr)
	}
	return stdout
}

func (m *scratch) run(t *testing.T, line string) (stdout, stderr string, err error) {
	t.Helper()
	args := strings.Fields(line)
	if len(args) == 0 || args[0] != "go" {
		t.Fatalf("the guide runs %q: only go commands are followed", line)
	}
	cmd := exec.Command(m.goC, args[1:]...)
	cmd.Dir, cmd.Env = m.dir, m.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// brokenKernel makes the guide's mistake (b for a in scale.cl), then one in
// a header too, and checks what go run says: the guide's error lines, the
// user's file names and lines, and no driver output on standard error
// before the program's own error.
func (m *scratch) brokenKernel(t *testing.T, steps []step) {
	var wantLines []string
	var kernel string
	for _, s := range steps {
		switch {
		case s.kind == "error":
			for _, l := range strings.Split(strings.TrimSpace(s.text), "\n") {
				if !strings.Contains(l, "…") {
					wantLines = append(wantLines, l)
				}
			}
		case s.kind == "file" && s.arg == "scale.cl":
			kernel = s.text
		}
	}
	if len(wantLines) == 0 || !strings.Contains(kernel, "x[i] *= a;") {
		t.Fatalf("%s shows no error block, or scale.cl lacks the line it changes", guide)
	}
	broken := strings.Replace(kernel, "x[i] *= a;", "x[i] *= b;", 1)
	cases := []struct {
		name   string
		files  map[string]string
		want   []string
		reject []string
	}{
		{"in scale.cl", map[string]string{"scale.cl": broken}, wantLines, nil},
		{"in a header", map[string]string{
			"util.h":   "// util.h: a helper.\nfloat twice(float v) { return 2 * w; }\n",
			"scale.cl": "#include \"util.h\"\n" + broken,
		}, []string{"error: util.h:2:", "error: scale.cl:6:11: use of undeclared identifier 'b'"}, []string{"scale.cl:5:"}},
	}
	for _, tc := range cases {
		t.Run("broken "+tc.name, func(t *testing.T) {
			for name, text := range tc.files {
				m.write(t, name, text)
			}
			m.sh(t, "go generate")
			if _, _, err := m.run(t, "go build -o hello ."); err != nil {
				t.Fatalf("go build: %v", err)
			}
			cmd := exec.Command(filepath.Join(m.dir, "hello"))
			cmd.Dir, cmd.Env = m.dir, m.env
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err == nil {
				t.Fatalf("a broken kernel ran: %s", o.String())
			}
			stderr := e.String()
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("the error does not say %q:\n%s", w, stderr)
				}
			}
			for _, r := range append(tc.reject, "tempfile") {
				if strings.Contains(stderr, r) {
					t.Errorf("the error says %q:\n%s", r, stderr)
				}
			}
			if i := strings.Index(stderr, "clBuildProgram"); i < 0 || strings.Contains(stderr[:i], "generated.") {
				t.Errorf("the driver wrote to standard error before the program's error:\n%s", stderr)
			}
		})
	}
}
