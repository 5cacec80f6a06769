package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"text/tabwriter"
)

// Row is one line of a summary: the tasks of one node.
type Row struct {
	Node uint64
	Kind string
	Name string
	Func string
	File string
	Line int
	// Count is the number of tasks whose enqueue ended, and HostTotal
	// their total host enqueue time in nanoseconds.
	Count     int64
	HostTotal int64
	// DeviceCount is the number of tasks with device times, and
	// DeviceTotal their total device execution time in nanoseconds.
	DeviceCount int64
	DeviceTotal int64
}

// HostMean returns the mean host enqueue time in nanoseconds.
func (r *Row) HostMean() int64 {
	if r.Count == 0 {
		return 0
	}
	return r.HostTotal / r.Count
}

// DeviceMean returns the mean device execution time in nanoseconds.
func (r *Row) DeviceMean() int64 {
	if r.DeviceCount == 0 {
		return 0
	}
	return r.DeviceTotal / r.DeviceCount
}

// Summary is a Subscriber that aggregates task times per source location
// (per node). It is safe for concurrent use; the zero Summary is ready.
type Summary struct {
	mu   sync.Mutex
	rows map[uint64]*Row
	// Dropped is the number of events the trace writer dropped, when the
	// summary was read from a trace file (ReadSummary) or printed by the
	// built-in summary subscriber; WriteTo prints it when it is not 0.
	Dropped uint64
}

func (s *Summary) row(n *Node) *Row {
	if s.rows == nil {
		s.rows = make(map[uint64]*Row)
	}
	r := s.rows[n.ID]
	if r == nil {
		r = &Row{Node: n.ID, Kind: n.Kind.String(), Name: n.Name, Func: n.Func, File: n.File, Line: n.Line}
		s.rows[n.ID] = r
	}
	return r
}

// Wants implements KindSubscriber: a summary reads nodes and the events
// that end a task's host and device times.
func (s *Summary) Wants(k Kind) bool {
	return k == NodeCreate || k == TaskEnd || k == TaskComplete
}

// HandleEvent implements Subscriber.
func (s *Summary) HandleEvent(e Event) {
	switch e.Kind {
	case NodeCreate:
		s.mu.Lock()
		s.row(e.Node)
		s.mu.Unlock()
	case TaskEnd:
		s.mu.Lock()
		r := s.row(e.Task.Node)
		r.Count++
		r.HostTotal += e.Task.HostEnd - e.Task.HostBegin
		s.mu.Unlock()
	case TaskComplete:
		s.mu.Lock()
		r := s.row(e.Task.Node)
		r.DeviceCount++
		r.DeviceTotal += e.Task.DevEnd - e.Task.DevStart
		s.mu.Unlock()
	}
}

// Rows returns a copy of the rows, by decreasing total host time, then by
// decreasing total device time, then by node ID.
func (s *Summary) Rows() []Row {
	s.mu.Lock()
	out := make([]Row, 0, len(s.rows))
	for _, r := range s.rows {
		out = append(out, *r)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.HostTotal != b.HostTotal {
			return a.HostTotal > b.HostTotal
		}
		if a.DeviceTotal != b.DeviceTotal {
			return a.DeviceTotal > b.DeviceTotal
		}
		return a.Node < b.Node
	})
	return out
}

// WriteTo writes the summary table to w.
func (s *Summary) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "count\thost total\thost mean\tdevice count\tdevice total\tdevice mean\t kind\t name\t location\t\n")
	for _, r := range s.Rows() {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t %s\t %s\t %s (%s:%d)\t\n",
			r.Count, fmtNs(r.HostTotal), fmtNs(r.HostMean()),
			r.DeviceCount, fmtNs(r.DeviceTotal), fmtNs(r.DeviceMean()),
			r.Kind, r.Name, r.Func, r.File, r.Line)
	}
	err := tw.Flush()
	if err == nil && s.Dropped > 0 {
		_, err = fmt.Fprintf(cw, "dropped: %d events (the trace writer could not keep up or store them)\n", s.Dropped)
	}
	return cw.n, err
}

// fmtNs formats nanoseconds as microseconds with three decimals.
func fmtNs(ns int64) string {
	b := make([]byte, 0, 24)
	b = appendMicros(b, ns)
	return string(append(b, "µs"...))
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// summaryWriter is the built-in "summary" subscriber: it prints the table
// when closed.
type summaryWriter struct {
	Summary
	w    io.Writer
	tf   *textFile // summary:PATH's file, or nil
	t    *Tracer   // for the count of dropped events; may be nil
	once sync.Once
}

func newSummaryWriter(w io.Writer, tf *textFile, t *Tracer) *summaryWriter {
	return &summaryWriter{w: w, tf: tf, t: t}
}

func (s *summaryWriter) Close() error {
	var err error
	s.once.Do(func() {
		if s.t != nil {
			s.mu.Lock()
			s.Dropped = s.t.Dropped()
			s.mu.Unlock()
		}
		if s.tf != nil {
			s.tf.check() // a file renamed away or removed is opened again
			s.w = s.tf.f
		}
		_, err = s.WriteTo(s.w)
		if s.tf != nil {
			if cerr := s.tf.f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			err = fmt.Errorf("trace: summary: %w", err)
		}
	})
	return err
}

// SummarizeFile reads a trace written by the perfetto subscriber and writes
// to w the summary table that the summary subscriber prints for the same run.
func SummarizeFile(path string, w io.Writer) error {
	s, err := ReadSummary(path)
	if err != nil {
		return err
	}
	_, err = s.WriteTo(w)
	return err
}

// ReadSummary reads a trace written by the perfetto subscriber and returns
// its summary: the trace's events replayed into a Summary (Replay).
func ReadSummary(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	s := &Summary{rows: make(map[uint64]*Row)}
	dropped, err := replay(data, s)
	if err != nil {
		return nil, fmt.Errorf("trace: %s: %w", path, err)
	}
	s.Dropped = dropped
	return s, nil
}

// decodeEvents decodes the events of a trace file: a record file (see
// Convert), or JSON in either of Chrome's formats: the JSON Object Format ({"traceEvents":[...]}) or the JSON Array
// Format, whose closing "]" may be missing, as it is in the file of a
// process that exited without closing its tracer.
func decodeEvents(data []byte) ([]fileEvent, error) {
	if IsRecordFile(data) {
		var buf bytes.Buffer
		if err := Convert(&buf, data); err != nil {
			return nil, err
		}
		data = buf.Bytes()
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var file struct {
			TraceEvents []fileEvent `json:"traceEvents"`
		}
		err := json.Unmarshal(data, &file)
		return file.TraceEvents, err
	}
	if len(data) > 0 && data[0] == '[' && data[len(data)-1] != ']' {
		data = append(bytes.TrimRight(data, ", \t\r\n"), ']')
	}
	var events []fileEvent
	err := json.Unmarshal(data, &events)
	return events, err
}

// fileEvent is the part of a trace file event that Replay reads.
type fileEvent struct {
	Name string      `json:"name"`
	Cat  string      `json:"cat"`
	Ph   string      `json:"ph"`
	Ts   json.Number `json:"ts"`
	Dur  json.Number `json:"dur"`
	Pid  int         `json:"pid"`
	Tid  int         `json:"tid"`
	Args struct {
		// A slice's.
		Node     string `json:"node"`
		Kind     string `json:"kind"`
		Func     string `json:"func"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		Task     uint64 `json:"task"`
		Instance uint64 `json:"instance"`
		// A memory event's.
		Size   int64  `json:"size"`
		Tag    uint64 `json:"tag"`
		Pooled bool   `json:"pooled"`
		// Name is a metadata event's: the process's or thread's name.
		Name string `json:"name"`
		// Dropped is the count of the "dgen: N events dropped" event.
		Dropped uint64 `json:"dropped"`
	} `json:"args"`
}

// parseMicros converts a decimal number of microseconds with up to three
// decimals, as the perfetto subscriber writes them, to exact nanoseconds.
func parseMicros(n json.Number) int64 {
	s := string(n)
	whole, frac, _ := cutByte(s, '.')
	w, _ := strconv.ParseInt(whole, 10, 64)
	for len(frac) < 3 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac[:3], 10, 64)
	if len(whole) > 0 && whole[0] == '-' {
		return w*1000 - f
	}
	return w*1000 + f
}

func cutByte(s string, c byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// appendMicros appends ns as microseconds with exactly three decimals.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}
