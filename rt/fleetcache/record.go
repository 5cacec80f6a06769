package fleetcache

import "github.com/dgen-go/dgen/rt/diskcache"

// Record adds s to the remote counters recorded in dir, a local cache root
// that exists, as diskcache.RecordRemote does; contexts record their
// counters there when they close.
func Record(dir string, s Stats) error { return diskcache.RecordRemote(dir, s) }

// Recorded returns the remote counters recorded in dir; none is zero Stats.
func Recorded(dir string) (Stats, error) { return diskcache.RecordedRemote(dir) }
