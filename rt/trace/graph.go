package trace

import "runtime"

// Recorded commands. A runtime that records commands to replay them later
// (a command graph) locates each command when it is recorded, with Site,
// and at every replay begins its task at that node, with BeginNode: the
// replayed commands appear at the source lines that recorded them.

// Site returns the node of a command of kind and name issued at the call
// site skip frames up (0 is the function that calls Site), creating it
// and emitting NodeCreate on its first use. Unlike Begin it begins no
// task, and it locates the site whether or not anyone subscribes: it costs
// a runtime.Callers walk, which recording pays once per command.
func (q *Queue) Site(kind CmdKind, name string, skip int) *Node {
	var pcs [1]uintptr
	var pc uintptr
	// Callers' frame 0 is Callers, 1 is Site, 2 is Site's caller.
	if runtime.Callers(skip+2, pcs[:]) == 1 {
		pc = pcs[0]
	}
	var key siteKey
	return q.t.newNode(&key, 0, pc, kind, name)
}

// BeginNode begins a task of the node n, which Site returned, on q: a
// replayed command. It emits what Begin emits and returns nil when
// StreamTask has no subscriber or n is nil. The task is released as
// Begin's is.
func (q *Queue) BeginNode(n *Node) *Task {
	if n == nil || q.view.Load() == nil {
		return nil
	}
	return q.beginNode(n)
}

func (q *Queue) beginNode(n *Node) *Task {
	v := q.view.Load()
	if v == nil { // unsubscribed since BeginNode looked
		return nil
	}
	return q.start(v, n)
}
