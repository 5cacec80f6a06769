//go:build !linux

package trace

import "os"

// linkFile gives the open file f, the file at from, the name to as well.
func linkFile(f *os.File, from, to string) error { return linkChecked(f, from, to) }
