//go:build !unix

package diskcache

import "os"

// openNoFollow opens path with flag and perm, refusing a symbolic link in
// its last element; see openCheckingLinks.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openCheckingLinks(path, flag, perm)
}
