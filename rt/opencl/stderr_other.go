//go:build cgo && !unix

package opencl

// captureWindow is one build's share of the standard error capture, which
// only Unix systems have (see stderr_unix.go).
type captureWindow struct{}

type stderrCapture struct{}

var captured stderrCapture

func (*stderrCapture) begin() captureWindow { return captureWindow{} }

func (*stderrCapture) end(captureWindow) string { return "" }
