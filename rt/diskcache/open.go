package diskcache

import (
	"os"
	"syscall"
)

// openCheckingLinks opens path with flag and perm, refusing a symbolic link in
// its last element with ELOOP, as O_NOFOLLOW does where the system has it.
// Without O_NOFOLLOW (Windows) the path is examined before it is opened
// and the file opened is checked to be the one examined, so a link put in
// place between the two is refused too.
func openCheckingLinks(path string, flag int, perm os.FileMode) (*os.File, error) {
	before, err := os.Lstat(path)
	switch {
	case err == nil && before.Mode()&os.ModeSymlink != 0:
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	case err != nil && (flag&os.O_CREATE == 0 || !os.IsNotExist(err)):
		return nil, err
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	after, err := os.Lstat(path)
	if err == nil && after.Mode()&os.ModeSymlink != 0 {
		err = &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	}
	if err == nil && before != nil && !os.SameFile(before, after) {
		err = &os.PathError{Op: "open", Path: path, Err: syscall.ELOOP}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
