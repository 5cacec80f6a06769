//go:build unix

package trace

import (
	"os"
	"os/signal"
	"syscall"
)

// handleSignals dumps on SIGUSR1 and SIGQUIT; after a SIGQUIT dump it
// raises SIGQUIT again for whoever else handles it, Go's default (a
// goroutine dump and exit 2) if nobody does.
func (fr *FlightRecorder) handleSignals() {
	sig, done := make(chan os.Signal, 1), make(chan struct{})
	fr.mu.Lock()
	fr.sig, fr.done = sig, done
	fr.mu.Unlock()
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGQUIT)
	go func() {
		for {
			select {
			case s := <-sig:
				fr.Dump()
				if s == syscall.SIGQUIT {
					// Hand SIGQUIT on: to the program's own handler if
					// it has one, else to Go's (a goroutine dump and
					// exit 2).
					signal.Stop(sig)
					signal.Notify(sig, syscall.SIGUSR1)
					syscall.Kill(os.Getpid(), syscall.SIGQUIT)
				}
			case <-done:
				return
			}
		}
	}()
}

func (fr *FlightRecorder) stopSignals() {
	fr.mu.Lock()
	sig, done := fr.sig, fr.done
	fr.sig = nil
	fr.mu.Unlock()
	if sig != nil {
		signal.Stop(sig)
		close(done)
	}
}
