package gen

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDiff(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		MainFile:                         "same",
		"zz_generated_a.dgen.go":         "old",
		"zz_generated_gone.dgen_test.go": "left over",
		"user.go":                        "package p",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := []File{
		{Name: MainFile, Content: []byte("same")},
		{Name: "zz_generated_a.dgen.go", Content: []byte("new")},
		{Name: "zz_generated_b.dgen.go", Content: []byte("new file")},
	}
	got, err := Diff(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"zz_generated_a.dgen.go: out of date",
		"zz_generated_b.dgen.go: would be created",
		"zz_generated_gone.dgen_test.go: would be removed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Diff = %q, want %q", got, want)
	}
	if err := Write(dir, files); err != nil {
		t.Fatal(err)
	}
	if got, err := Diff(dir, files); err != nil || len(got) != 0 {
		t.Errorf("Diff after Write = %q, %v; want nothing", got, err)
	}
}
