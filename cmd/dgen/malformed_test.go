package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMalformedGolden runs the command over every golden package that has
// expected diagnostics: each must exit 1, print exactly those
// diagnostics, and leave the directory as it was.
func TestMalformedGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "golden", "testdata", "src", "*", "diagnostics.txt"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden packages with diagnostics: %v", err)
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			before := listDir(t, dir)
			var stdout, stderr bytes.Buffer
			if rc := runGenerate([]string{"-C", dir}, &stdout, &stderr); rc != 1 {
				t.Errorf("exit status %d, want 1", rc)
			}
			if stderr.String() != string(want) {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
			}
			if after := listDir(t, dir); !slices.Equal(before, after) {
				t.Errorf("the directory changed: %v, then %v", before, after)
			}
		})
	}
}

func listDir(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
