package diskcache

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// A binary that passes every check may still crash the driver that loads
// it (a forged or truncated payload), and with it every later run. So the
// caller marks each load (Loading): a marker file in the key's directory,
// locked while the load runs and removed after it. A marker found unlocked
// belongs to a process that died during the load. The next lookup of the
// key then drops the binary the marker names; a binary that was being
// loaded at two such deaths is quarantined: listed in the directory's
// quarantine file, never returned, stored or accepted from the remote
// again for that key. One death alone (a process killed by chance during
// the load) costs a rebuild, not the binary.
const (
	loadingPrefix  = "loading-"
	quarantineName = "quarantine"
	// quarantineDeaths is how many deaths during a load of one binary
	// quarantine it.
	quarantineDeaths = 2
)

var loadSeq atomic.Uint64

// errCrashed is why an entry whose load a process died in is dropped.
var errCrashed = corruption("a process died loading it into the driver")

// Loading records that the caller is about to load bin, the binary of key,
// into the driver, and returns the function to call once the load has
// returned (successfully or not). If the process dies in between, the next
// lookup of key drops the binary (see the package documentation). Loading
// does nothing on a disabled cache.
func (c *Cache) Loading(key Key, bin []byte) (done func()) {
	if !c.Enabled() {
		return func() {}
	}
	dir := c.keyDir(&key)
	p := filepath.Join(dir, fmt.Sprintf("%s%d-%d", loadingPrefix, os.Getpid(), loadSeq.Add(1)))
	l, err := lockFile(nil, p, true)
	if err != nil {
		c.tracef("load marker %s: %v", p, err)
		return func() {}
	}
	if err := os.WriteFile(p, []byte(hex16(xxhash.Sum64(bin))+"\n"), 0o644); err != nil {
		c.tracef("load marker %s: %v", p, err)
	}
	return func() {
		os.Remove(p)
		l.unlock()
	}
}

// checkLoads looks for markers of loads that died in dir, whose listing is
// ents, and returns the binary checksums to drop and those quarantined.
// The caller holds the key lock.
func (c *Cache) checkLoads(dir string, ents []os.DirEntry) (drop, quarantined map[uint64]bool) {
	var died []uint64
	hasQuarantine := false
	for _, e := range ents {
		name := e.Name()
		if name == quarantineName {
			hasQuarantine = true
		}
		if !strings.HasPrefix(name, loadingPrefix) {
			continue
		}
		p := filepath.Join(dir, name)
		l, err := lockFile(nil, p, true)
		if err != nil {
			continue // a load in progress
		}
		sum, ok := readSum(p)
		os.Remove(p)
		l.unlock()
		if ok {
			c.tracef("a process died loading %s (binary %016x)", dir, sum)
			died = append(died, sum)
		}
	}
	if len(died) == 0 && !hasQuarantine {
		return nil, nil
	}
	qp := filepath.Join(dir, quarantineName)
	if len(died) > 0 {
		if f, err := openNoFollow(qp, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			for _, s := range died {
				fmt.Fprintf(f, "%s\n", hex16(s))
			}
			f.Close()
		}
	}
	counts := readQuarantine(qp)
	drop, quarantined = map[uint64]bool{}, map[uint64]bool{}
	for _, s := range died {
		drop[s] = true
	}
	for s, n := range counts {
		if n >= quarantineDeaths {
			drop[s], quarantined[s] = true, true
		}
	}
	return drop, quarantined
}

// isQuarantined reports whether bin is quarantined for the key of dir.
func isQuarantined(dir string, bin []byte) bool {
	if dir == "" {
		return false
	}
	return readQuarantine(filepath.Join(dir, quarantineName))[xxhash.Sum64(bin)] >= quarantineDeaths
}

// readQuarantine returns how often each binary checksum is listed.
func readQuarantine(p string) map[uint64]int {
	f, _, err := openRegular(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	m := map[uint64]int{}
	sc := bufio.NewScanner(io.LimitReader(f, 1<<16))
	for sc.Scan() {
		if v, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 16, 64); err == nil {
			m[v]++
		}
	}
	return m
}

func readSum(p string) (uint64, bool) {
	f, _, err := openRegular(p)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64))
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 16, 64)
	return v, err == nil
}
