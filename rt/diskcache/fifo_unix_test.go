//go:build unix

package diskcache

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at p.
func mkfifo(t *testing.T, p string) error { return syscall.Mkfifo(p, 0o644) }
