package gen

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteAsWhole makes the n-th rename of Write fail, for every n, and
// checks that the directory then holds the old set of generated files,
// byte for byte, and nothing else; without a failure it holds the new set.
func TestWriteAsWhole(t *testing.T) {
	old := map[string]string{
		MainFile:                      "package p // old main\n",
		"zz_generated_a.dgen.go":      "package p // old a, gone from the new set\n",
		"zz_generated_b.dgen_test.go": "package p // old b\n",
		"user.go":                     "package p\n",
	}
	next := []File{
		{Name: MainFile, Content: []byte("package p // new main\n")},
		{Name: "zz_generated_b.dgen_test.go", Content: []byte("package p // new b\n")},
		{Name: "zz_generated_c.dgen.go", Content: []byte("package p // new c\n")},
	}
	for fail := 1; ; fail++ {
		dir := t.TempDir()
		for name, content := range old {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		calls := 0
		rename = func(from, to string) error {
			if calls++; calls == fail {
				return errors.New("injected failure")
			}
			return os.Rename(from, to)
		}
		err := Write(dir, next)
		rename = os.Rename
		want := old
		if err == nil {
			want = map[string]string{"user.go": old["user.go"]}
			for _, f := range next {
				want[f.Name] = string(f.Content)
			}
		} else if !strings.Contains(err.Error(), "injected failure") {
			t.Fatalf("rename %d failing: Write = %v", fail, err)
		}
		if got := readDir(t, dir); !equalMaps(got, want) {
			t.Errorf("rename %d failing (Write = %v): directory holds %v, want %v", fail, err, keys(got), keys(want))
		}
		if err == nil {
			if fail < 2 {
				t.Fatal("Write never renamed")
			}
			return
		}
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestWriteBlocked has a directory where the last new file goes: Write
// fails and the generated files written before it are the old ones again.
func TestWriteBlocked(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, MainFile), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "zz_generated_z.dgen.go", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(dir, []File{{Name: MainFile, Content: []byte("new")}, {Name: "zz_generated_z.dgen.go", Content: []byte("new z")}})
	if err == nil {
		t.Fatal("Write over a directory succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, MainFile)); string(b) != "old" {
		t.Errorf("%s holds %q after the failed Write, want the old content", MainFile, b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %d entries after the failed Write, want 2", len(ents))
	}
}
