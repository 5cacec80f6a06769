package rt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// lockedBuffer is a bytes.Buffer that goroutines write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTraceSubscribersLog: DGEN_TRACE's summary and log subscribers
// without a path write through Config.Logger, one Info record a line (the
// summary's table writer writes a line in pieces), not to stderr.
func TestTraceSubscribersLog(t *testing.T) {
	tests := []struct {
		spec string
		want []string // a record that holds all of these
	}{
		{"summary", []string{"count", "host total", "location"}},
		{"summary", []string{"marker", "logger_test.go"}},
		{"log", []string{"marker"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			var buf lockedBuffer
			cc := defaultCacheConfig()
			cc.Disk.Persistent = false
			ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "fake", Device: "cpu", Cache: &cc, Trace: tt.spec, Logger: slog.New(slog.NewTextHandler(&buf, nil))}))
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ctx.Queue().Marker()
			if err == nil {
				err = ev.Wait()
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := ctx.Close(); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			found := false
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.HasPrefix(l, "time=") || !strings.Contains(l, "level=INFO") {
					t.Errorf("line %q is not an Info record", l)
				}
				all := true
				for _, w := range tt.want {
					all = all && strings.Contains(l, w)
				}
				found = found || all
			}
			if !found {
				t.Errorf("log %q, want an Info record with all of %q", out, tt.want)
			}
		})
	}
}
