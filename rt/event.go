package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Event is the completion status of one enqueued command. Pass it in a wait
// list to order commands, or Wait for it. The backend event is released
// when the Event becomes unreachable, or earlier by Release.
type Event = core.Event

// Timing is a command's device timestamps: when it was queued, submitted
// to the device, started and ended, each the time since an epoch of the
// device's clock. Only differences between the timestamps of one device
// mean anything.
type Timing = core.Timing
