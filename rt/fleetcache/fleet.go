package fleetcache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// ErrConfig reports a malformed remote configuration.
var ErrConfig = errors.New("malformed remote cache configuration")

// publishSlots bounds the publishes in flight.
const publishSlots = 4

// Poll intervals of a process that waits for another's build.
const (
	minPoll = 20 * time.Millisecond
	maxPoll = 50 * time.Millisecond
)

// Stats counts what a Fleet did.
type Stats = diskcache.RemoteStats

// Fleet is a connection to a remote store. It implements diskcache.Remote.
// Its methods are safe for concurrent use.
type Fleet struct {
	cfg Config
	st  store

	downUntil atomic.Int64 // Unix nanoseconds until which the remote is out of use
	warned    atomic.Bool
	traceMu   sync.Mutex

	slots chan struct{}
	bg    sync.WaitGroup

	hits, misses, publishes, errs, rejected, dropped, waits atomic.Int64

	foreign sync.Map // addresses of signed entries this node cannot verify: never replaced (trust.go)
}

var _ diskcache.RemoteTier = (*Fleet)(nil)

// The remote tier registers itself with the persistent cache, as a
// database/sql driver does: a program that imports this package (for its
// side effect, if it uses nothing else of it) gets the shared tier that
// DGEN_CACHE_REMOTE names; one that does not links no store client.
func init() {
	diskcache.RegisterRemote(openTier)
	diskcache.RegisterRemoteCheck(checkTier)
}

// tierConfig is the configuration of the tier that rc names (rt fills rc
// from its Config, whose fields are the DGEN_CACHE_REMOTE_ variables).
func tierConfig(rc diskcache.RemoteConfig) (Config, error) {
	mode, err := ParseMode(rc.Mode)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{URL: rc.URL, Mode: mode, InsecureUnsigned: rc.Unsigned, Timeout: rc.Timeout, Lease: rc.Lease}
	if rc.Key != "" {
		cfg.Secret = []byte(rc.Key)
	}
	return cfg, nil
}

// checkTier reports a configuration that openTier would refuse, opening
// nothing.
func checkTier(rc diskcache.RemoteConfig) error {
	cfg, err := tierConfig(rc)
	if err != nil {
		return err
	}
	return cfg.check()
}

// openTier opens the tier that rc names.
func openTier(rc diskcache.RemoteConfig) (diskcache.RemoteTier, error) {
	cfg, err := tierConfig(rc)
	if err != nil {
		return nil, err
	}
	cfg.Logger, cfg.Trace, cfg.Events = rc.Logger, rc.Trace, rc.Events
	f, err := Open(cfg)
	if f == nil || err != nil {
		return nil, err // a nil *Fleet must not become a non-nil interface
	}
	return f, nil
}

// Open connects to the store that cfg.URL names; it returns nil and no
// error when cfg.URL is empty. It sends no request: an unreachable store
// shows at the first use. Without cfg.Secret it fails with ErrUnsigned,
// unless cfg.InsecureUnsigned opts in to an unsigned store.
func Open(cfg Config) (*Fleet, error) {
	if cfg.URL == "" {
		return nil, nil
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg.fill()
	st, err := openStore(&cfg)
	if err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, st: st, slots: make(chan struct{}, publishSlots)}
	f.tracef("remote %s, mode %s, signed %v", Redact(cfg.URL), cfg.Mode, len(cfg.Secret) > 0)
	return f, nil
}

// Stats returns the counters.
func (f *Fleet) Stats() Stats {
	if f == nil {
		return Stats{}
	}
	return Stats{Hits: f.hits.Load(), Misses: f.misses.Load(), Publishes: f.publishes.Load(), Errors: f.errs.Load(),
		Rejected: f.rejected.Load(), Dropped: f.dropped.Load(), Waits: f.waits.Load()}
}

// Close waits up to wait for the publishes in flight and closes the
// connection.
func (f *Fleet) Close(wait time.Duration) error {
	if f == nil {
		return nil
	}
	done := make(chan struct{})
	go func() { f.bg.Wait(); close(done) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		f.tracef("close: publishes still in flight after %v", wait)
	}
	return f.st.close()
}

func (f *Fleet) tracef(format string, args ...any) {
	if f.cfg.Trace == nil {
		return
	}
	f.traceMu.Lock()
	defer f.traceMu.Unlock()
	fmt.Fprintf(f.cfg.Trace, "fleetcache: "+format+"\n", args...)
}

// usable reports whether the remote is in use (not backing off).
func (f *Fleet) usable() bool { return time.Now().UnixNano() >= f.downUntil.Load() }

// fail counts a failed request, takes the remote out of use for the
// backoff and warns once.
func (f *Fleet) fail(op string, err error) {
	f.errs.Add(1)
	f.downUntil.Store(time.Now().Add(f.cfg.Backoff).UnixNano())
	f.tracef("%s: %v; remote out of use for %v", op, err, f.cfg.Backoff)
	if f.cfg.Logger != nil && !f.warned.Swap(true) {
		f.cfg.Logger.Warn("dgen: remote program cache failed; going on with the local cache",
			"url", Redact(f.cfg.URL), "op", op, "err", err)
	}
}

func (f *Fleet) event(op EventOp, key *diskcache.Key, n int, d time.Duration) {
	if f.cfg.Events != nil {
		f.cfg.Events(Event{Op: op, Program: key.ProgramName, Bytes: n, Duration: d})
	}
}

func (f *Fleet) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, f.cfg.Timeout)
}

// Fetch returns the binary the remote holds for key, if it holds one that
// passes every check. Failures are counted and reported, never returned.
func (f *Fleet) Fetch(ctx context.Context, key diskcache.Key) ([]byte, bool) {
	if !f.cfg.Mode.reads() || !f.usable() {
		return nil, false
	}
	kb := key.Encode()
	bin, ok := f.fetch(ctx, &key, kb, address(kb))
	if !ok && !diskcache.FirstLook(ctx) {
		f.misses.Add(1)
	}
	return bin, ok
}

func (f *Fleet) fetch(ctx context.Context, key *diskcache.Key, kb []byte, addr string) ([]byte, bool) {
	t0 := time.Now()
	rctx, cancel := f.request(ctx)
	e, ok, err := f.st.get(rctx, addr, f.cfg.MaxEntrySize)
	cancel()
	if err == nil && ok {
		var bin []byte
		if bin, err = openEntry(e, kb, f.cfg.Secret); err == nil {
			f.hits.Add(1)
			f.tracef("hit %s %s (%d bytes)", key.ProgramName, addr, len(bin))
			f.event(Hit, key, len(bin), time.Since(t0))
			return bin, true
		}
	}
	switch {
	case errors.Is(err, ErrRejected):
		f.reject(ctx, key, addr, err) // trust.go
	case err != nil && ctx.Err() == nil:
		f.fail("fetch", err)
		return nil, false
	}
	f.tracef("miss %s %s", key.ProgramName, addr)
	return nil, false
}

// Publish stores bin under key on the remote in the background.
func (f *Fleet) Publish(key diskcache.Key, bin []byte) {
	if !f.cfg.Mode.writes() || !f.usable() {
		return
	}
	kb := key.Encode()
	f.publish(&key, kb, address(kb), bin, "")
}

// publish uploads in the background, then gives up the lease of token (if
// not empty). With no free slot the entry is dropped.
func (f *Fleet) publish(key *diskcache.Key, kb []byte, addr string, bin []byte, token string) {
	up := bin != nil && f.cfg.Mode.writes() && f.usable()
	if up && int64(len(bin)+len(kb)+entryHeader+trailerSize) > f.cfg.MaxEntrySize {
		f.tracef("not published %s: %d bytes", key.ProgramName, len(bin))
		up = false
	}
	if !up && token == "" {
		return
	}
	select {
	case f.slots <- struct{}{}:
	default:
		if up {
			f.dropped.Add(1)
			f.tracef("publish %s dropped: %d publishes in flight", key.ProgramName, publishSlots)
		}
		up = false
		if token == "" {
			return
		}
		f.slots <- struct{}{} // an unclaim is short: wait for a slot
	}
	f.bg.Add(1)
	go func() {
		defer f.bg.Done()
		defer func() { <-f.slots }()
		if up && f.keeps(addr) { // trust.go
			f.tracef("not published %s %s: the remote holds a signed entry this node cannot verify", key.ProgramName, addr)
			up = false
		}
		if up {
			t0 := time.Now()
			ctx, cancel := f.request(context.Background())
			err := f.st.put(ctx, addr, sealEntry(kb, bin, f.cfg.Secret))
			cancel()
			if err != nil {
				f.fail("publish", err)
			} else {
				f.publishes.Add(1)
				f.tracef("publish %s %s (%d bytes)", key.ProgramName, addr, len(bin))
				f.event(Publish, key, len(bin), time.Since(t0))
			}
		}
		if token != "" {
			ctx, cancel := f.request(context.Background())
			if err := f.st.unclaim(ctx, addr, token); err != nil {
				f.tracef("release lease %s: %v", addr, err)
			}
			cancel()
		}
	}()
}

// Claim is called on a local miss, before a build. It returns the remote's
// binary for key if there is one, or waits for it while another process
// holds the key's lease (at most as long as ctx allows); otherwise it takes
// the lease and returns done, which the caller must call once with the
// binary it built (nil if the build failed): done publishes the binary in
// the background and gives up the lease.
func (f *Fleet) Claim(ctx context.Context, key diskcache.Key) (bin []byte, ok bool, done func([]byte)) {
	kb := key.Encode()
	addr := address(kb)
	if !f.usable() {
		return nil, false, func([]byte) {}
	}
	if !f.cfg.Mode.reads() {
		return nil, false, func(b []byte) { f.publish(&key, kb, addr, b, "") }
	}
	bin, ok, done = f.claim(ctx, &key, kb, addr)
	if !ok {
		f.misses.Add(1)
	}
	return bin, ok, done
}

// claim is Claim for a reading Fleet.
func (f *Fleet) claim(ctx context.Context, key *diskcache.Key, kb []byte, addr string) ([]byte, bool, func([]byte)) {
	noLease := func(b []byte) { f.publish(key, kb, addr, b, "") }
	if bin, ok := f.fetch(ctx, key, kb, addr); ok {
		return bin, true, nil
	}
	token := newToken()
	poll, waited := minPoll, false
	for f.usable() {
		rctx, cancel := f.request(ctx)
		won, err := f.st.claim(rctx, addr, token, f.cfg.Lease)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				f.fail("claim", err)
			}
			break
		}
		if won {
			// The previous holder publishes before it lets go: look
			// once more, so that its entry is not built again.
			if bin, ok := f.fetch(ctx, key, kb, addr); ok {
				f.publish(key, kb, addr, nil, token)
				return bin, true, nil
			}
			f.tracef("lease %s %s", key.ProgramName, addr)
			return nil, false, f.holdLease(key, kb, addr, token)
		}
		if !waited {
			waited = true
			f.waits.Add(1)
			f.tracef("wait for %s %s: another process builds it", key.ProgramName, addr)
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			f.tracef("wait for %s ended: %v", key.ProgramName, ctx.Err())
			return nil, false, noLease
		case <-t.C:
		}
		poll = min(2*poll, maxPoll)
		if bin, ok := f.fetch(ctx, key, kb, addr); ok {
			return bin, true, nil
		}
	}
	return nil, false, noLease
}

// holdLease renews the lease of token until the returned function is
// called, which publishes and releases.
func (f *Fleet) holdLease(key *diskcache.Key, kb []byte, addr, token string) func([]byte) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(f.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ctx, cancel := f.request(context.Background())
				if err := f.st.renew(ctx, addr, token, f.cfg.Lease); err != nil {
					f.tracef("renew lease %s: %v", addr, err)
				}
				cancel()
			}
		}
	}()
	var once sync.Once
	return func(bin []byte) {
		once.Do(func() {
			close(stop)
			wg.Wait()
			f.publish(key, kb, addr, bin, token)
		})
	}
}

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
