package rt

import (
	"errors"
	"fmt"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// remoteFlushWait bounds how long Close waits for publishes to the remote
// tier that are still in flight.
const remoteFlushWait = 2 * time.Second

// checkRemote fails when cfg names a remote tier (DGEN_CACHE_REMOTE) and
// the program has registered none: the tier is opt-in, by a blank import
// of rt/fleetcache, and a configuration that asks for it in a program
// without it is a mistake to report, not to ignore.
func checkRemote(cfg *CacheConfig) error {
	if cfg.Remote.URL == "" || diskcache.RemoteRegistered() {
		return nil
	}
	return fmt.Errorf("DGEN_CACHE_REMOTE is set: %w", diskcache.ErrNoRemote)
}

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
	r, err := diskcache.OpenRemote(rc)
	if err != nil || r == nil {
		if err == nil {
			err = errors.New("no tier")
		}
		fmt.Fprintf(rc.Warnings, "dgen: warning: remote program cache off: %v\n", err)
		return
	}
	c.remote = r
	cfg.Disk.Remote = r
}

// remoteEvent traces remote hits and publishes as cache events.
func (c *Context) remoteEvent(e diskcache.RemoteEvent) {
	op := trace.RemoteHit
	if e.Op == diskcache.RemotePublish {
		op = trace.RemotePublish
	}
	c.traceCache(0, trace.Cache{Op: op, Program: e.Program, Duration: e.Duration.Nanoseconds()})
}

// remoteStats returns the remote tier's counters; zero without one.
func (c *Context) remoteStats() diskcache.RemoteStats {
	if c.remote == nil {
		return diskcache.RemoteStats{}
	}
	return c.remote.Stats()
}

// closeRemote waits a little for publishes in flight, disconnects, and
// adds the counters to those recorded in the cache directory, which
// `dgen cache stat` shows.
func (c *Context) closeRemote() {
	if c.remote == nil {
		return
	}
	c.remote.Close(remoteFlushWait)
	c.disk.Wait()
	if c.disk.Enabled() {
		if err := diskcache.RecordRemote(c.disk.Dir(), c.remote.Stats()); err != nil {
			c.pc.Logf("%v", err)
		}
	}
}
