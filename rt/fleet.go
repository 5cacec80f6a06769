package rt

import (
	"fmt"
	"time"

	"github.com/dgen-go/dgen/rt/fleetcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// remoteFlushWait bounds how long Close waits for publishes to the remote
// tier that are still in flight.
const remoteFlushWait = 2 * time.Second

// openRemote connects the context's cache to the shared remote tier that
// cfg.Remote names, if any, and puts it beneath the persistent cache
// (cfg.Disk.Remote). A remote that cannot be opened is reported once and
// left out.
func (c *Context) openRemote(cfg *CacheConfig) {
	rc := cfg.Remote
	if rc.URL == "" {
		return
	}
	if rc.Warnings == nil {
		rc.Warnings = warnings(cfg)
	}
	if rc.Trace == nil {
		rc.Trace = cfg.Disk.Trace
	}
	if rc.Events == nil {
		rc.Events = c.remoteEvent
	}
	f, err := fleetcache.Open(rc)
	if err != nil {
		fmt.Fprintf(rc.Warnings, "dgen: warning: remote program cache off: %v\n", err)
		return
	}
	c.fleet = f
	cfg.Disk.Remote = f
}

// remoteEvent traces remote hits and publishes as cache events.
func (c *Context) remoteEvent(e fleetcache.Event) {
	op := trace.RemoteHit
	if e.Op == fleetcache.Publish {
		op = trace.RemotePublish
	}
	c.traceCache(0, trace.Cache{Op: op, Program: e.Program, Duration: e.Duration.Nanoseconds()})
}

// closeRemote waits a little for publishes in flight, disconnects, and
// adds the counters to those recorded in the cache directory, which
// `dgen cache stat` shows.
func (c *Context) closeRemote() {
	if c.fleet == nil {
		return
	}
	c.fleet.Close(remoteFlushWait)
	c.disk.Wait()
	if c.disk.Enabled() {
		if err := fleetcache.Record(c.disk.Dir(), c.fleet.Stats()); err != nil {
			c.pc.Logf("%v", err)
		}
	}
}
