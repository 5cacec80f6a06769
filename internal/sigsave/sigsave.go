// Package sigsave keeps Go's signal handling across calls into C
// libraries that install handlers of their own.
//
// OpenCL and CUDA drivers carry compilers (LLVM) that install handlers for
// most signals when they load, build or first launch a kernel: SIGUSR1
// then never reaches a signal.Notify channel, and SIGQUIT neither dumps
// the goroutines nor ends the process, because Go installs its handler
// once, at start-up, and never looks again. A backend therefore brackets
// every call that can install handlers (loading the driver, creating a
// context, building or loading a program, a kernel's first launch) with
// Keep:
//
//	defer sigsave.Keep()()
//
// Keep saves every signal's action; the function it returns puts back the
// actions that the driver changed meanwhile. Calls that overlap share one
// bracket: the first to begin saves, the last to end restores, so that a
// handler installed during one call is never saved as Go's by another.
// An action that the bracket finds set to Go's own handler is left alone,
// since only Go installs it (signal.Notify of a signal that was ignored);
// an action set meanwhile by signal.Ignore or signal.Reset is put back to
// Go's handler, which honours both.
package sigsave

import "sync"

var (
	mu    sync.Mutex // guards depth; held only while saving or restoring
	depth int        // brackets open
)

// Keep saves the signal actions, unless a bracket is already open, and
// returns the function that ends this bracket.
func Keep() (end func()) {
	mu.Lock()
	if depth == 0 {
		save()
	}
	depth++
	mu.Unlock()
	return leave
}

// leave ends a bracket; the last one restores the actions that changed.
func leave() {
	mu.Lock()
	if depth--; depth == 0 {
		restore()
	}
	mu.Unlock()
}
