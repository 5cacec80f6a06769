package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Graph is a list of commands recorded on a queue (Queue.Record), replayed
// with Launch. Its methods are safe for concurrent use.
type Graph core.Graph

// core returns g as the core's graph.
func (g *Graph) core() *core.Graph { return (*core.Graph)(g) }

// Launch enqueues the graph's commands on q after the events of wait, in
// the order they were recorded, with one backend call. q must be a queue
// of the graph's context. A buffer or pinned memory that a command uses
// and that was freed since it was recorded is an error that names the
// command, and nothing is enqueued. Launch creates no event; Queue.Marker
// gives one.
func (g *Graph) Launch(q *Queue, wait ...*Event) error {
	var w core.WaitList
	return g.core().Launch(q.core(), waits(&w, wait)...)
}

// Update changes the recorded kernel launch n, whose handle Queue.Node
// returned while g recorded, for the launches that follow: enqueue is
// called with a recording queue of its own, and must enqueue exactly one
// launch of the same kernel, typically the generated Enqueue of the kernel
// spec with new field values (a swapped pair of buffers, a new scalar), so
// that the compiler checks the types as for any Enqueue. A node of
// another graph or of another command than a launch, an argument whose
// kind or size differs from the recorded one, another kernel or the same
// kernel under other specialization-constant values (another variant of
// its program), no launch or more than one, is an error naming the graph
// and the command, and the graph is left as it was. Launches already enqueued keep what they were
// enqueued with.
func (g *Graph) Update(n *GraphNode, enqueue func(q *Queue) error) error {
	return g.core().Update((*core.GraphNode)(n), queueFunc(enqueue))
}

// Release releases what the graph holds: its kernel objects, what the
// backend prepared, and the memory allocated on the queue while it
// recorded, which it frees (stream-ordered after its launches). A graph
// still recording stops recording. Releasing twice does nothing.
func (g *Graph) Release() error { return g.core().Release() }

// GraphNode is the handle of a recorded command, which Queue.Node returns
// while a graph records; Graph.Update takes it.
type GraphNode core.GraphNode
