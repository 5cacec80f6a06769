package clcorpus

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad loads the corpus of the source tree: every file that a truth
// file names is read, with kernels.
func TestLoad(t *testing.T) {
	t.Setenv("DGEN_CL_CORPUS", "")
	files, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Errorf("%d files, want the 43 of testdata", len(files))
	}
	for _, f := range files {
		if f.Src == "" || len(f.Kernels) == 0 {
			t.Errorf("%s: %d bytes, %d kernels", f.Path, len(f.Src), len(f.Kernels))
		}
	}
}

// TestManifest checks that the corpus may be redistributed as it is: every
// file under testdata is listed in MANIFEST.tsv with its origin, or is a
// header a listed file includes, a truth file, or the corpus's own
// documentation; and every folder of code by others carries its license.
func TestManifest(t *testing.T) {
	dir := "testdata"
	listed := map[string]bool{}
	f, err := os.Open(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if path, origin, ok := strings.Cut(sc.Text(), "\t"); ok && path != "local_path" {
			if origin == "" {
				t.Errorf("MANIFEST.tsv: %s has no origin", path)
			}
			listed[path] = true
		}
	}
	for path := range listed {
		if _, err := os.Stat(filepath.Join(dir, path)); err != nil {
			t.Errorf("MANIFEST.tsv lists %s: %v", path, err)
		}
		if top, _, _ := strings.Cut(path, "/"); top != "dgen" {
			if _, err := os.Stat(filepath.Join(dir, top, "LICENSE")); err != nil {
				t.Errorf("%s: no license beside the code of others: %v", path, err)
			}
		}
	}
	var size int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		size += info.Size()
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		switch {
		case listed[rel], strings.HasPrefix(rel, "truth/"), strings.HasSuffix(rel, "/LICENSE"), strings.HasSuffix(rel, "/main.h"):
		case rel == "MANIFEST.tsv", rel == "OPTIONS.tsv", rel == "README.md", rel == "maketruth.py":
		default:
			t.Errorf("%s is in the corpus but not in MANIFEST.tsv", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if size > 2<<20 {
		t.Errorf("the corpus holds %d bytes; keep it under 2 MiB", size)
	}
}

// TestDirOutsideTree: without a go.mod above the working directory, Dir
// reports ErrNoSourceTree, on which the corpus tests skip.
func TestDirOutsideTree(t *testing.T) {
	t.Setenv("DGEN_CL_CORPUS", "")
	t.Chdir(t.TempDir())
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), ErrNoSourceTree.Error()) {
		t.Errorf("Dir outside the tree: %v, want ErrNoSourceTree", err)
	}
}
