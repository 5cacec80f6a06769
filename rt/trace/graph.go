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
// replayed command. It emits what Begin emits and returns the zero Task
// when StreamTask has no subscriber or n is nil.
func (q *Queue) BeginNode(n *Node) Task {
	if n == nil || q.task.subs.Load() == nil {
		return Task{}
	}
	t := q.t
	tk := Task{ID: t.nextTask.Add(1), Node: n, Queue: q, Instance: n.instances.Add(1), HostBegin: t.Now()}
	if subs := q.task.wanting(TaskBegin); subs != nil {
		e := Event{Kind: TaskBegin, Stream: t.task, Time: tk.HostBegin, Device: q.Device, Task: tk}
		deliver(subs, &e)
	}
	if q.InOrder {
		q.mu.Lock()
		prev := q.last
		q.last = tk
		q.mu.Unlock()
		if subs := q.task.wanting(EdgeCreate); prev.ID != 0 && subs != nil {
			e := Event{Kind: EdgeCreate, Implicit: true, Stream: t.task, Time: tk.HostBegin, Device: q.Device, Task: tk, From: prev}
			deliver(subs, &e)
		}
	}
	return tk
}
