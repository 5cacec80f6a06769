//go:build unix

package opencl

/*
#include <unistd.h>
*/
import "C"

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Some drivers write to the process's standard error while they build:
// PoCL's compiler, clang, prints "2 errors generated." there, beside the
// build log that the error already carries. A build therefore runs with
// file descriptor 2 pointing at an unlinked temporary file. When the last
// build in progress ends, fd 2 is restored, and what was written meanwhile
// goes on to the real standard error, but for clang's summary lines: those
// go into the error of a build that failed. Anything else written to
// standard error during a build (by the driver or by other goroutines) is
// therefore delayed until the build ends, not lost; only a process that
// dies during a build loses what it wrote in that time.
type stderrCapture struct {
	mu    sync.Mutex
	n     int      // builds in progress
	saved C.int    // the real fd 2, while n > 0
	file  *os.File // where fd 2 points, while n > 0
}

var captured stderrCapture

// captureWindow is one build's share of the capture.
type captureWindow struct {
	file  *os.File
	start int64
}

// driverNoise matches clang's summary line.
var driverNoise = regexp.MustCompile(`^\d+ (warnings?|errors?)( and \d+ errors?)? generated\.$`)

// begin starts capturing standard error for one build. It returns a zero
// window, and captures nothing, where fd 2 cannot be redirected.
func (c *stderrCapture) begin() captureWindow {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		f, err := os.CreateTemp("", "dgen-driver-stderr-*")
		if err != nil {
			return captureWindow{}
		}
		os.Remove(f.Name())
		saved := C.dup(2)
		if saved < 0 {
			f.Close()
			return captureWindow{}
		}
		if C.dup2(C.int(f.Fd()), 2) < 0 {
			C.close(saved)
			f.Close()
			return captureWindow{}
		}
		c.file, c.saved = f, saved
	}
	c.n++
	off, _ := c.file.Seek(0, io.SeekCurrent)
	return captureWindow{file: c.file, start: off}
}

// end ends a window and returns clang's summary lines written in it. The
// last window to end restores fd 2 and copies what was written to it,
// without those lines, to the real standard error.
func (c *stderrCapture) end(w captureWindow) string {
	if w.file == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	noise, _ := split(readFrom(w.file, w.start))
	if c.n--; c.n > 0 {
		return noise
	}
	C.dup2(c.saved, 2)
	C.close(c.saved)
	_, rest := split(readFrom(c.file, 0))
	c.file.Close()
	c.file = nil
	writeFD2(rest)
	return noise
}

// writeFD2 writes s to file descriptor 2, whatever os.Stderr is now.
func writeFD2(s string) {
	for b := []byte(s); len(b) > 0; {
		n, err := syscall.Write(2, b)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		b = b[n:]
	}
}

// readFrom reads f from off to its end.
func readFrom(f *os.File, off int64) []byte {
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil || end <= off {
		return nil
	}
	b := make([]byte, end-off)
	n, _ := f.ReadAt(b, off)
	return b[:n]
}

// split separates clang's summary lines from the rest of b.
func split(b []byte) (noise, rest string) {
	var n, r bytes.Buffer
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		if driverNoise.Match(bytes.TrimRight(line, "\r\n")) {
			n.Write(line)
		} else {
			r.Write(line)
		}
	}
	return n.String(), r.String()
}
