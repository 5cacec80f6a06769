package gen

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOtherSystemTests checks GOOS=darwin dgen (windows on a darwin host)
// on a package whose test uses a function of a Linux-only file: the
// package builds for the target, and Go needs its tests to compile only
// where they run, so the test's type error does not stop generation; a
// test file's error that every system has still does.
func TestOtherSystemTests(t *testing.T) {
	target := "darwin"
	if runtime.GOOS == target {
		target = "windows"
	}
	tests := []struct {
		name, test string
		want       string // a diagnostic, "" for none
	}{
		{"host-only symbol", "package p\n\nimport \"testing\"\n\nfunc TestHost(t *testing.T) { _ = hostOnly() }\n", ""},
		{"error everywhere", "package p\n\nvar _ int = \"s\"\n", "p_test.go:3:13"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePackage(t)
			files := map[string]string{
				"src.cl":                       "__kernel void k(int n) {}\n",
				"host_" + runtime.GOOS + ".go": "package p\n\nfunc hostOnly() int { return 1 }\n",
				"p_test.go":                    tt.test,
				"site.go":                      "package p\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n//dgen:alloc\nvar site rt.AllocSite[int32]\n",
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("GOOS", target)
			t.Setenv("CGO_ENABLED", "0")
			_, err := Generate(dir)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("GOOS=%s: %v, want no error", target, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("GOOS=%s: %v, want a diagnostic at %s", target, err, tt.want)
			}
		})
	}
}
