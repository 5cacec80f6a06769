package trace

import (
	"fmt"
	"io"
	"strconv"
	"sync"
)

// logger is the built-in "log" subscriber: one line per event.
type logger struct {
	mu     sync.Mutex
	w      io.Writer
	tf     *textFile // log:PATH's file, or nil
	buf    []byte
	closed bool
	err    error // the first write error, returned by Close
}

func newLogger(w io.Writer, tf *textFile) *logger { return &logger{w: w, tf: tf} }

// NewLogger returns a Subscriber that writes one line per event to w. It
// is the subscriber that the spec "log" selects.
func NewLogger(w io.Writer) Subscriber { return newLogger(w, nil) }

// HandleEvent implements Subscriber.
func (l *logger) HandleEvent(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.err != nil {
		return
	}
	if l.tf != nil {
		l.tf.look() // a file renamed away or removed is opened again
		l.w = l.tf.f
	}
	l.buf = AppendEvent(l.buf[:0], &e)
	l.buf = append(l.buf, '\n')
	if _, err := l.w.Write(l.buf); err != nil {
		l.err = err
	}
}

// Close closes the file, if the logger has one, and returns the first
// error of writing or closing it; the logger stops writing at the first.
func (l *logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.tf != nil {
		if err := l.tf.f.Close(); err != nil && l.err == nil {
			l.err = err
		}
	}
	if l.err != nil {
		return fmt.Errorf("trace: log: %w", l.err)
	}
	return nil
}

// AppendEvent appends a one-line description of e to b, as the log
// subscriber prints it, and returns the extended buffer.
func AppendEvent(b []byte, e *Event) []byte {
	b = append(b, "trace "...)
	b = appendMicros(b, e.Time)
	b = append(b, "µs "...)
	b = append(b, e.Kind.String()...)
	switch e.Kind {
	case GraphCreate:
		b = append(b, " graph="...)
		b = appendHex(b, e.Graph)
	case NodeCreate:
		b = appendNode(b, e.Node)
	case TaskBegin, TaskEnd, TaskComplete:
		b = appendTask(b, &e.Task)
		switch e.Kind {
		case TaskEnd:
			b = append(b, " host="...)
			b = appendMicros(b, e.Task.HostEnd-e.Task.HostBegin)
			b = append(b, "µs"...)
		case TaskComplete:
			b = append(b, " device="...)
			b = appendMicros(b, e.Task.DevEnd-e.Task.DevStart)
			b = append(b, "µs start="...)
			b = appendMicros(b, e.Task.DevStart)
			b = append(b, "µs"...)
		}
	case EdgeCreate:
		b = append(b, " from="...)
		b = strconv.AppendUint(b, e.From.ID, 10)
		b = append(b, " to="...)
		b = strconv.AppendUint(b, e.Task.ID, 10)
		if e.Implicit {
			b = append(b, " implicit"...)
		}
	case MemAlloc, MemRelease:
		b = append(b, " device="...)
		b = append(b, e.Device.Name...)
		b = append(b, " tag="...)
		b = strconv.AppendUint(b, e.Mem.Tag, 10)
		if e.Mem.TagName != "" {
			b = append(b, '(')
			b = append(b, e.Mem.TagName...)
			b = append(b, ')')
		}
		b = append(b, " size="...)
		b = strconv.AppendInt(b, e.Mem.Size, 10)
		if e.Mem.Pooled {
			b = append(b, " pooled"...)
		} else {
			b = append(b, " driver"...)
		}
	case UserRange:
		b = append(b, " name="...)
		b = append(b, e.Name...)
		b = append(b, " duration="...)
		b = appendMicros(b, e.Time-e.Begin)
		b = append(b, "µs"...)
	case UserMark:
		b = append(b, " name="...)
		b = append(b, e.Name...)
	case CacheEvent:
		b = append(b, " device="...)
		b = append(b, e.Device.Name...)
		b = append(b, ' ')
		b = append(b, e.Cache.Op.String()...)
		b = append(b, " program="...)
		b = append(b, e.Cache.Program...)
		b = append(b, " duration="...)
		b = appendMicros(b, e.Cache.Duration)
		b = append(b, "µs"...)
	}
	return b
}

func appendNode(b []byte, n *Node) []byte {
	b = append(b, " node="...)
	b = appendHex(b, n.ID)
	b = append(b, ' ')
	b = append(b, n.Kind.String()...)
	b = append(b, ' ')
	b = append(b, n.Name...)
	b = append(b, ' ')
	b = append(b, n.Func...)
	b = append(b, ' ')
	b = append(b, n.File...)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(n.Line), 10)
}

func appendTask(b []byte, tk *Task) []byte {
	b = append(b, " task="...)
	b = strconv.AppendUint(b, tk.ID, 10)
	b = append(b, " queue="...)
	b = append(b, tk.Queue.Device.Name...)
	b = append(b, '/')
	b = append(b, tk.Queue.Name...)
	b = append(b, ' ')
	b = append(b, tk.Node.Kind.String()...)
	b = append(b, ' ')
	b = append(b, tk.Node.Name...)
	b = append(b, " #"...)
	b = strconv.AppendUint(b, tk.Instance, 10)
	b = append(b, ' ')
	b = append(b, tk.Node.File...)
	b = append(b, ':')
	return strconv.AppendInt(b, int64(tk.Node.Line), 10)
}
