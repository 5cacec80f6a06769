package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewriteCorpus rewrites every .ptx file under DGEN_PTX_CORPUS (NVIDIA
// OpenCL's binaries of a corpus of programs, as cmd/... writes them on the
// GPU machine) and testdata: each is rewritten or refused with an
// *UnsupportedError, never anything else, and the rewrite is idempotent.
func TestRewriteCorpus(t *testing.T) {
	dirs := []string{"testdata"}
	if d := os.Getenv("DGEN_PTX_CORPUS"); d != "" {
		dirs = append(dirs, d)
	}
	var files []string
	for _, d := range dirs {
		f, _ := filepath.Glob(filepath.Join(d, "*.ptx"))
		files = append(files, f...)
	}
	kernels, refused := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Rewrite(src)
		var ue *UnsupportedError
		if errors.As(err, &ue) {
			refused++
			t.Logf("%s: refused: %v", filepath.Base(f), err)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		kernels += len(m.Entries)
		checkRewritten(t, filepath.Base(f), m)
		m2, err := Rewrite(m.PTX)
		if err != nil {
			t.Errorf("%s: rewriting the rewritten PTX: %v", filepath.Base(f), err)
			continue
		}
		if !bytes.Equal(m.PTX, m2.PTX) {
			t.Errorf("%s: the rewrite is not idempotent", filepath.Base(f))
		}
		if len(m.Entries) != len(m2.Entries) {
			t.Errorf("%s: %d entries, then %d", filepath.Base(f), len(m.Entries), len(m2.Entries))
		}
		for i := range m.Entries {
			if !entryEqual(m.Entries[i], m2.Entries[i]) {
				t.Errorf("%s: entry %+v, then %+v", filepath.Base(f), m.Entries[i], m2.Entries[i])
			}
		}
	}
	t.Logf("%d files: %d kernels rewritten, %d files refused", len(files), kernels, refused)
}

func entryEqual(a, b Entry) bool {
	if a.Name != b.Name || a.WorkDim != b.WorkDim || len(a.Params) != len(b.Params) {
		return false
	}
	for i := range a.Params {
		if a.Params[i] != b.Params[i] {
			return false
		}
	}
	return true
}

// checkRewritten checks what CUDA needs of rewritten PTX.
func checkRewritten(t *testing.T, name string, m *Module) {
	t.Helper()
	s := string(m.PTX)
	for _, bad := range []string{"%envreg", "texmode_independent"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s: rewritten PTX still has %s", name, bad)
		}
	}
	for _, l := range strings.Split(s, "\n") {
		code, _, _ := strings.Cut(l, "//")
		if strings.Contains(code, ".ptr") {
			t.Errorf("%s: rewritten PTX keeps a .ptr attribute: %q", name, l)
		}
		if strings.HasPrefix(strings.TrimSpace(code), ".entry") {
			t.Errorf("%s: an entry is not visible: %q", name, l)
		}
	}
}
