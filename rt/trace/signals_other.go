//go:build !unix

package trace

// handleSignals does nothing where there are no SIGUSR1 and SIGQUIT.
func (fr *FlightRecorder) handleSignals() {}

func (fr *FlightRecorder) stopSignals() {}
