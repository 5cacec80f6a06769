package diskcache

import "errors"

// Sentinel errors, for use with errors.Is.
var (
	// ErrCorrupt reports an entry that failed its header or checksum
	// checks: empty, truncated, torn, altered, or of another format
	// version. Such an entry is removed and treated as a miss.
	ErrCorrupt = errors.New("corrupt entry")
	// ErrUnavailable reports a cache root that cannot be used; the cache
	// is then disabled.
	ErrUnavailable = errors.New("cache directory unavailable")
	// ErrConfig reports a malformed configuration value.
	ErrConfig = errors.New("malformed configuration")
	// ErrBusy reports that a lock could not be taken in time.
	ErrBusy = errors.New("cache busy")
)

// Error records a failed cache operation, the path it was working on, and
// the cause. Its message has the form "diskcache: <op> <path>: <cause>".
type Error struct {
	Op   string // the operation, such as "read entry" or "write entry"
	Path string // the file or directory
	Err  error  // the cause
}

// Error returns the message.
func (e *Error) Error() string {
	return "diskcache: " + e.Op + " " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// corruption is the cause of an ErrCorrupt error: its message says what is
// wrong ("checksum mismatch") and it matches ErrCorrupt.
type corruption string

func (c corruption) Error() string        { return string(c) }
func (c corruption) Is(target error) bool { return target == ErrCorrupt }

func opError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Path: path, Err: err}
}
