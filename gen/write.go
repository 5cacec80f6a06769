package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// createTemp creates a new temporary file in dir as os.CreateTemp does, but
// with mode 0666 less the umask, as the files that go generate writes
// usually have: os.CreateTemp's 0600 would survive the rename.
func createTemp(dir string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, fmt.Sprintf(".dgen-%016x.tmp", rand.Uint64()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, ".dgen-*.tmp"), Err: fs.ErrExist}
}
