package diskcache

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenNoFollow checks both ways of refusing a symbolic link: the
// O_NOFOLLOW of this system (openNoFollow) and the check by examination
// that systems without it use (openCheckingLinks, tested here too).
func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	dangling := filepath.Join(dir, "dangling")
	if err := errors.Join(os.Symlink(file, link), os.Symlink(filepath.Join(dir, "nowhere"), dangling)); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	opens := map[string]func(string, int, os.FileMode) (*os.File, error){
		"openNoFollow": openNoFollow, "openCheckingLinks": openCheckingLinks,
	}
	cases := []struct {
		name, path string
		flag       int
		wantLoop   bool
	}{
		{"regular file", file, os.O_RDONLY, false},
		{"new file", filepath.Join(dir, "new"), os.O_WRONLY | os.O_CREATE | os.O_APPEND, false},
		{"link to a file, read", link, os.O_RDONLY, true},
		{"link to a file, append", link, os.O_WRONLY | os.O_APPEND | os.O_CREATE, true},
		{"dangling link, create", dangling, os.O_WRONLY | os.O_CREATE, true},
	}
	for name, open := range opens {
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				f, err := open(tc.path, tc.flag, 0o644)
				if err == nil {
					f.Close()
				}
				if got := errors.Is(err, syscall.ELOOP); got != tc.wantLoop || (!tc.wantLoop && err != nil) {
					t.Errorf("open %s: %v; want ELOOP %v", tc.name, err, tc.wantLoop)
				}
			})
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("creating through a dangling link made its target: %v", err)
	}
}
