package golden

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen"
)

// TestStaleGenerated generates testdata/stale, then edits its Go
// declarations without generating again, as a user who forgets go
// generate does, and checks that each edit fails loudly: at compile time
// with the guard's message where the compiler can see the change, at the
// first launch with rt.ErrStale where it cannot (a struct of another
// package, whose fields the generated file cannot guard).
func TestStaleGenerated(t *testing.T) {
	needSource(t)
	goTool, _ := exec.LookPath("go")
	cases := []struct {
		name     string
		file     string
		from, to string
		build    string // the compiler's message, "" when the build succeeds
		run      string // what the program prints
	}{
		{name: "fresh", run: "ok"},
		{name: "field type", file: "k.go", from: "N   int32", to: "N   float32",
			build: "ERROR: field N of K changed type after go generate read it: run go generate"},
		{name: "fields moved", file: "k.go", from: "N   int32\n\tF   float32", to: "F   float32\n\tN   int32",
			build: "ERROR: K changed after go generate read it (a field was added, removed or moved): run go generate"},
		{name: "field added", file: "k.go", from: "Pts rt.Buffer[Pair]", to: "Pts rt.Buffer[Pair]\n\tM   int32",
			build: "ERROR: K changed after go generate read it"},
		{name: "element field type", file: "k.go", from: "A, B int32", to: "A float32\n\tB int32",
			build: "ERROR: field A of Pair changed type after go generate read it: run go generate"},
		{name: "element of another package", file: "elem/elem.go", from: "X, Y float32", to: "Y, X float32",
			run: "stale: kernel github.com/dgen-go/dgen/golden/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, err := os.MkdirTemp(".", "stale-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			copyStale(t, filepath.Join("testdata", "stale"), dir, "github.com/dgen-go/dgen/golden/"+filepath.Base(dir))
			files, err := gen.Generate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := gen.Write(dir, files); err != nil {
				t.Fatal(err)
			}
			if c.file != "" {
				path := filepath.Join(dir, c.file)
				b, err := os.ReadFile(path)
				if err != nil || !strings.Contains(string(b), c.from) {
					t.Fatalf("%s does not hold %q: %v", c.file, c.from, err)
				}
				if err := os.WriteFile(path, []byte(strings.Replace(string(b), c.from, c.to, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			bin := filepath.Join(dir, "stale.bin")
			out, err := exec.Command(goTool, "build", "-o", bin, "./"+dir).CombinedOutput()
			if c.build != "" {
				if err == nil || !strings.Contains(string(out), c.build) {
					t.Fatalf("go build: %v\n%s\nwant a failure with %q", err, out, c.build)
				}
				return
			}
			if err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err = exec.Command(bin).CombinedOutput()
			if strings.HasPrefix(string(out), "no device:") {
				t.Skipf("%s", out)
			}
			if !strings.Contains(string(out), c.run) {
				t.Fatalf("the program printed %q (%v), want %q", out, err, c.run)
			}
			if c.run != "ok" && !strings.Contains(string(out), "run go generate") {
				t.Errorf("%q does not say to run go generate", out)
			}
		})
	}
}

// copyStale copies the package src to dst, naming its import path pkg.
func copyStale(t *testing.T, src, dst, pkg string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, []byte(strings.ReplaceAll(string(b), "STALEPKG", pkg)), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
