package trace

import (
	stdslog "log/slog"
	"os"
	"time"
)

// textFile is the file of a log or summary subscriber (log:PATH,
// summary:PATH), which writes it with plain appending writes, not through
// a mapping: a truncation (logrotate's copytruncate, : > PATH) costs it
// nothing, but a file renamed away (logrotate's create) or removed would
// take every later line with it. So its writer looks, at most once every
// watchEvery and before the summary is written, whether PATH is still its
// file; if not, it opens PATH again, for appending, with one warning.
type textFile struct {
	path   string // absolute
	f      *os.File
	log    *stdslog.Logger
	next   time.Time // when look checks again
	failed bool      // the last attempt to open path again failed (warned)
}

// look checks the file unless it did less than watchEvery ago.
func (tf *textFile) look() {
	if now := time.Now(); now.After(tf.next) {
		tf.next = now.Add(watchEvery)
		tf.check()
	}
}

// names reports whether path names the open file f.
func names(path string, f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	at, err := os.Stat(path)
	return err == nil && os.SameFile(fi, at)
}

// check opens tf.path again if it no longer names tf.f, a regular file.
func (tf *textFile) check() {
	if fi, err := tf.f.Stat(); err != nil || !fi.Mode().IsRegular() || names(tf.path, tf.f) {
		return
	}
	f, err := os.OpenFile(tf.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o666)
	if err != nil {
		if !tf.failed {
			tf.log.Warn("dgen: trace file moved away or removed while the program ran and cannot be made again; it is written where it went", "path", tf.path, "err", err)
		}
		tf.failed = true
		return
	}
	tf.f.Close()
	tf.f = f
	if tf.failed {
		tf.log.Info("dgen: trace file made again; the trace goes on in it", "path", tf.path)
	} else {
		tf.log.Warn("dgen: trace file moved away or removed while the program ran; the trace goes on in a file at its path", "path", tf.path)
	}
	tf.failed = false
}
