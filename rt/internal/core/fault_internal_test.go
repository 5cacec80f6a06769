package core

import (
	"testing"
)

// TestLaunchLog: the log lists the launches after its last
// synchronisation, oldest first, at most launchLogSize of them with a
// count of the rest; a dropped launch (its enqueue failed) leaves it, and
// so does one that a later launch overwrote only then.
func TestLaunchLog(t *testing.T) {
	a, b, c := &launchSite{kernel: "a"}, &launchSite{kernel: "b"}, &launchSite{kernel: "c"}
	var l launchLog
	if s, _, n := l.inFlight(); s != nil || n != 0 {
		t.Fatalf("empty log lists %v and %d more", s, n)
	}
	for range 3 {
		l.add(a, 0)
	}
	l.synchronised(l.mark())
	n := l.add(b, 42)
	l.add(a, 0)
	l.drop(n, b)
	sites, pcs, omitted := l.inFlight()
	if len(sites) != 1 || sites[0] != a || pcs[0] != 0 || omitted != 0 {
		t.Errorf("after a synchronisation and a dropped launch: %v %v %d, want only a", sites, pcs, omitted)
	}
	for i := range 100 {
		l.add(c, uintptr(i+1))
	}
	// 102 launches since the synchronisation, the dropped one counted.
	sites, pcs, omitted = l.inFlight()
	if len(sites) != launchLogSize || omitted != 102-launchLogSize || pcs[launchLogSize-1] != 100 || sites[0] != c {
		t.Errorf("102 launches in flight: %d listed (last pc %d), %d omitted; want %d and %d", len(sites), pcs[len(pcs)-1], omitted, launchLogSize, 102-launchLogSize)
	}
	l.drop(n, b) // its slot holds a later launch now: nothing changes
	if s, _, _ := l.inFlight(); len(s) != launchLogSize {
		t.Errorf("a stale drop removed a later launch: %d listed", len(s))
	}
}

// BenchmarkLaunchLog measures what a launch adds to its queue's log
// (always), and what reading the caller's program counter costs (under
// Config.SyncLaunches only), from a call depth like a generated Enqueue's.
//
//	go test ./rt/internal/core -run '^$' -bench LaunchLog -count 10
func BenchmarkLaunchLog(b *testing.B) {
	s := &launchSite{kernel: "k", program: "p"}
	var l launchLog
	b.Run("add", func(b *testing.B) {
		for b.Loop() {
			l.add(s, 0)
		}
	})
	b.Run("callerpc", func(b *testing.B) {
		for b.Loop() {
			depth(4, func() { l.add(s, callerPC(6)) })
		}
	})
}

// depth calls f n frames down.
//
//go:noinline
func depth(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	depth(n-1, f)
}
