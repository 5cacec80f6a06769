package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Queue is an in-order command queue on one device. It is safe for
// concurrent use: commands from several goroutines are ordered as they
// reach it. Goroutines that launch concurrently scale best with a queue
// each (Context.NewQueue), as CUDA threads do with a stream each: a
// generated Enqueue then shares no kernel object and takes no lock.
type Queue = core.Queue
