package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Graph is a list of commands recorded on a queue, replayed with Launch.
// Its methods are safe for concurrent use.
type Graph = core.Graph

// GraphNode is the handle of a recorded command, which Queue.Node returns
// while a graph records; Graph.Update takes it.
type GraphNode = core.GraphNode
