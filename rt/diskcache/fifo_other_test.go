//go:build !unix

package diskcache

import "testing"

// mkfifo skips the test: the system has no FIFOs in its file system.
func mkfifo(t *testing.T, p string) error {
	t.Skip("no FIFOs on this system")
	return nil
}
