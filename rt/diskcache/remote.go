package diskcache

import (
	"context"
	"os"
	"path/filepath"
)

// Remote is a shared tier beneath the cache, such as the one package
// rt/fleetcache connects to. A Remote never returns errors: it counts and
// reports its own failures, and a failure is a miss.
//
// The cache asks the remote after a local miss and stores what it returns
// locally, through the local checks; it publishes what it builds or is given.
type Remote interface {
	// Fetch returns the remote's binary for key, checked against the full
	// key, or ok false.
	Fetch(ctx context.Context, key Key) (bin []byte, ok bool)
	// Claim is Fetch before a build: on a miss it may wait, within ctx,
	// for another process that builds key, and return its binary. If it
	// returns ok false, the caller builds and then calls done once with
	// the binary, or with nil if the build failed.
	Claim(ctx context.Context, key Key) (bin []byte, ok bool, done func(bin []byte))
	// Publish stores bin under key in the background.
	Publish(key Key, bin []byte)
}

// firstLookKey marks the context of a Fetch that is GetOrBuild's first
// look (see FirstLook).
type firstLookKey struct{}

// firstLook returns ctx marked as a first look.
func firstLook(ctx context.Context) context.Context {
	return context.WithValue(ctx, firstLookKey{}, true)
}

// FirstLook reports whether ctx marks a Fetch as the first look of a
// lookup that, on a miss, either finds the binary locally after all
// (another local process stored it) or goes on to Claim: the remote then
// counts no miss and no rejection for the Fetch, since the lookup is
// counted once, where it ends (a local hit, or Claim's hit or miss).
func FirstLook(ctx context.Context) bool {
	v, _ := ctx.Value(firstLookKey{}).(bool)
	return v
}

// Encode returns the full key as the cache stores it: every field, the
// program name included, in a stable binary encoding.
func (k *Key) Encode() []byte { return k.encode() }

// storeFetched stores locally, in the background, a binary the remote
// returned, so that the caller can load it at once: a local write and its
// syncs cost more than the fetch. The store takes the locks it needs; Wait
// waits for it. A process that exits first loses only the local copy.
func (c *Cache) storeFetched(dir string, key *Key, src, bin []byte) {
	c.tracef("fetched %s (%d bytes)", dir, len(bin))
	if dir == "" || !c.storable(len(bin)) {
		return
	}
	k := *key
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.LockTimeout)
		defer cancel()
		tree, err := c.lockTree(ctx, false)
		if err != nil {
			c.tracef("store fetched %s: %v", dir, c.degradeOn(err))
			return
		}
		defer tree.unlock()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			c.tracef("%v", c.degradeOn(opError("create directory", dir, err)))
			return
		}
		kl, err := lockFile(ctx, filepath.Join(dir, keyLockName), true)
		if err != nil {
			c.tracef("store fetched %s: %v", dir, err)
			return
		}
		defer kl.unlock()
		if err := c.store(dir, &k, src, bin); err != nil {
			c.tracef("%v", c.degradeOn(err))
		}
	}()
}

// Wait waits for the local stores of fetched binaries still in progress.
func (c *Cache) Wait() { c.bg.Wait() }

// claimRemote is GetOrBuild's remote step: with the key lock held
// exclusively, it asks the remote for key and otherwise runs build and
// hands the result to the remote.
func (c *Cache) claimRemote(ctx context.Context, dir string, key *Key, src []byte, build func() ([]byte, error)) (bin []byte, fetched bool, err error) {
	if c.cfg.Remote == nil {
		b, err := build()
		return b, false, err
	}
	bin, ok, done := c.cfg.Remote.Claim(ctx, *key)
	if ok && !isQuarantined(dir, bin) {
		c.storeFetched(dir, key, src, bin)
		return bin, true, nil
	}
	if ok { // the remote's binary crashed this node's driver: replace it
		c.tracef("remote binary for %s quarantined; building", dir)
		done = func(b []byte) {
			if b != nil {
				c.cfg.Remote.Publish(*key, b)
			}
		}
	}
	b, err := build()
	if done != nil {
		if err != nil {
			done(nil)
		} else {
			done(b)
		}
	}
	return b, false, err
}
