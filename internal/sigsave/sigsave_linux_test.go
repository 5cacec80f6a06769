//go:build linux && cgo

package sigsave

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// kernelSigaction is the kernel's struct sigaction on linux.
type kernelSigaction struct{ handler, flags, restorer, mask uintptr }

// ignore sets sig's action to SIG_IGN behind Go's back, as a driver's
// signal(SIGUSR1, SIG_IGN) would.
func ignore(t *testing.T, sig syscall.Signal) {
	t.Helper()
	a := kernelSigaction{handler: 1} // SIG_IGN
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&a)), 0, 8, 0, 0); e != 0 {
		t.Fatal(e)
	}
}

// TestKeep changes SIGUSR1's action inside brackets and checks that
// signal.Notify receives a SIGUSR1 once the last bracket has ended.
func TestKeep(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"one bracket", func(t *testing.T) {
			end := Keep()
			ignore(t, syscall.SIGUSR1)
			end()
		}},
		{"overlapping brackets", func(t *testing.T) {
			endA := Keep()
			ignore(t, syscall.SIGUSR1)
			endB := Keep() // must not save the driver's action as Go's
			endA()
			endB()
		}},
		{"nested brackets", func(t *testing.T) {
			defer Keep()()
			func() {
				defer Keep()()
				ignore(t, syscall.SIGUSR1)
			}()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := restored
			tt.run(t)
			if depth != 0 {
				t.Fatalf("%d brackets open after the last ended", depth)
			}
			if restored == before {
				t.Errorf("no action restored")
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGUSR1)
			defer signal.Stop(sig)
			syscall.Kill(os.Getpid(), syscall.SIGUSR1)
			select {
			case <-sig:
			case <-time.After(10 * time.Second): // a bound on a lost signal, not a timing
				t.Fatal("SIGUSR1 did not reach signal.Notify")
			}
		})
	}
}
