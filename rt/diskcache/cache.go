package diskcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Outcome says how GetOrBuild obtained a binary.
type Outcome int

const (
	// Built means the build function ran.
	Built Outcome = iota
	// Hit means the binary was loaded from the cache.
	Hit
	// Waited means another process or goroutine held the key (it was
	// building or writing it) and the binary was loaded from the cache
	// once it was done.
	Waited
	// Fetched means the binary came from the remote tier (Config.Remote);
	// it is stored locally in the background.
	Fetched
)

// String returns "built", "hit", "waited" or "fetched".
func (o Outcome) String() string {
	switch o {
	case Built:
		return "built"
	case Hit:
		return "hit"
	case Waited:
		return "waited"
	case Fetched:
		return "fetched"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// touchGranularity is the resolution of access times: a hit updates the
// access time of an entry only if it is older than this.
const touchGranularity = time.Second

// Cache is a persistent program-binary cache rooted at a directory. Its
// methods are safe for concurrent use by goroutines and by processes that
// share the directory.
type Cache struct {
	cfg  Config
	root string

	// rootInfo is the root as Open found or made it (or as checkRoot last
	// made it again): every operation that takes the tree lock first
	// checks that the root is still that directory. rootDir holds it
	// open, so that its inode is not reused by a directory made in its
	// place after a removal (the file is closed when the Cache is
	// collected). rootMu serializes the changes of both.
	rootMu   sync.Mutex
	rootInfo atomic.Pointer[os.FileInfo]
	rootDir  *os.File

	enabled atomic.Bool
	errMu   sync.Mutex
	err     error // why the cache is disabled

	traceMu sync.Mutex
	bg      sync.WaitGroup // local stores of fetched binaries

	// Test hooks.
	now   func() time.Time
	hash  hashFunc
	hooks *writeHooks
}

// Open opens the cache described by cfg. It always returns a usable Cache.
// If cfg.Persistent is false the cache is disabled and err is nil. If the
// root cannot be used, the cache is disabled and err wraps ErrUnavailable
// (and the underlying cause): the caller should report it once and go on
// with in-memory caching only. A malformed cfg gives a disabled cache and an
// error wrapping ErrConfig.
//
// The cache holds its root open until Close, and checks before every
// lookup and store that the root is still the directory it opened (a
// stat). A root that was removed (rm -rf by an operator or a cleanup job)
// is made again and marked; another directory put in its place is used
// only where the cache may write there (a dgen cache directory, or an
// empty one, which it marks); anything else, a regular file say, turns the
// cache off. Each such change is said once through Config.Logger, with
// what the cache did.
func Open(cfg Config) (*Cache, error) { return open(cfg, nil) }

func open(cfg Config, setup func(*Cache)) (*Cache, error) {
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = DefaultLockTimeout
	}
	dirErr := resolveDir(&cfg)
	c := &Cache{cfg: cfg, root: cfg.Dir, now: time.Now, hash: xxhash.Sum64}
	if setup != nil {
		setup(c)
	}
	if dirErr != nil {
		err := &Error{Op: "open", Path: "(no cache directory)", Err: unavailable{dirErr}}
		c.setErr(err)
		return c, err
	}
	if cfg.MaxSize < 0 || cfg.MinImageSize < 0 || cfg.MaxImageSize < 0 || cfg.MaxAge < 0 {
		err := fmt.Errorf("diskcache: negative size or age in configuration: %w", ErrConfig)
		c.setErr(err)
		return c, err
	}
	if !cfg.Persistent {
		c.tracef("persistent cache off")
		return c, nil
	}
	if err := c.probe(); err != nil {
		c.setErr(err)
		c.tracef("disabled: %v", err)
		return c, err
	}
	c.enabled.Store(true)
	c.tracef("open %s (max size %d, max age %v, eviction disabled %v)", c.root, cfg.MaxSize, cfg.MaxAge, cfg.EvictionDisabled)
	c.maybeAgeEvict()
	return c, nil
}

// unavailable is the cause of an ErrUnavailable error.
type unavailable struct{ err error }

func (u unavailable) Error() string {
	return "cache directory unavailable, caching in memory only: " + u.err.Error()
}
func (u unavailable) Is(target error) bool { return target == ErrUnavailable }
func (u unavailable) Unwrap() error        { return u.err }

// resolveDir makes cfg.Dir the absolute root that it names: the user
// cache directory's dgen where it is empty, and a relative directory made
// absolute against the working directory of the time, so that a later
// chdir does not move the cache.
func resolveDir(cfg *Config) error {
	if cfg.Dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no user cache directory (%v); set DGEN_CACHE_DIR (Config.Cache.Disk.Dir)", err)
		}
		cfg.Dir = filepath.Join(base, defaultSubdirectory)
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return fmt.Errorf("cache directory %s: %w", cfg.Dir, err)
	}
	cfg.Dir = abs // Abs cleans it
	return nil
}

// probe checks that the root can be created, written and locked.
func (c *Cache) probe() error {
	fail := func(err error) error { return &Error{Op: "open", Path: c.root, Err: unavailable{err}} }
	if err := c.claimRoot(); err != nil {
		return fail(err)
	}
	if err := c.pinRoot(); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(c.root, tempPrefix+"probe-*")
	if err != nil {
		return fail(err)
	}
	_, werr := f.Write([]byte("dgen"))
	serr := f.Sync()
	cerr := f.Close()
	os.Remove(f.Name())
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fail(err)
	}
	l, err := lockFile(nil, filepath.Join(c.root, treeLockName), false)
	if err != nil && !errors.Is(err, ErrBusy) {
		return fail(err)
	}
	l.unlock()
	return nil
}

// Enabled reports whether the cache stores and loads binaries.
func (c *Cache) Enabled() bool { return c.enabled.Load() }

// Err returns why the cache is disabled: the error Open returned, or a later
// write failure (full disk, read-only file system) that disabled it. It
// returns nil while the cache is enabled or when it was configured off.
func (c *Cache) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// Dir returns the cache root.
func (c *Cache) Dir() string { return c.root }

// setErr disables the cache and records why; it reports whether err is the
// first reason.
func (c *Cache) setErr(err error) bool {
	c.enabled.Store(false)
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.err == nil {
		c.err = err
		return true
	}
	return false
}

// degradeOn disables the cache if err says the disk cannot take more
// writes, and returns the error to report.
func (c *Cache) degradeOn(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		werr := &Error{Op: "write", Path: c.root, Err: unavailable{err}}
		if c.setErr(werr) && c.cfg.Logger != nil {
			c.cfg.Logger.Warn("dgen: persistent program cache off", "dir", c.root, "err", err)
		}
		c.tracef("disabled: %v", err)
		return werr
	}
	return err
}

func (c *Cache) tracef(format string, args ...any) {
	if c.cfg.Trace == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	c.traceMu.Lock()
	defer c.traceMu.Unlock()
	fmt.Fprintf(c.cfg.Trace, "diskcache: %s\n", msg)
}

// keyDir returns the directory of a key.
func (c *Cache) keyDir(k *Key) string {
	p := keyDirParts(c.hash, k)
	return filepath.Join(c.root, p[0], p[1], p[2], p[3])
}

// maxBin bounds what a read of a .bin file may allocate: the maximum image
// size, or DefaultMaxImageSize times 4 when there is none.
func (c *Cache) maxBin() int64 {
	if c.cfg.MaxImageSize > 0 {
		return c.cfg.MaxImageSize
	}
	return 4 * DefaultMaxImageSize
}

// storable reports whether a binary of n bytes is within the size limits.
func (c *Cache) storable(n int) bool {
	if int64(n) < c.cfg.MinImageSize || (c.cfg.MaxImageSize > 0 && int64(n) > c.cfg.MaxImageSize) {
		c.tracef("not stored: %d bytes outside [%d, %d]", n, c.cfg.MinImageSize, c.cfg.MaxImageSize)
		return false
	}
	return true
}

// Get returns the binary stored for key. It returns ok false on a miss. An
// entry found corrupt is removed and reported as a miss together with an
// error that wraps ErrCorrupt; callers should treat every error as a miss.
// If another process holds the key exclusively (building or writing it),
// Get waits up to Config.LockTimeout.
func (c *Cache) Get(key Key) (bin []byte, ok bool, err error) {
	bin, _, ok, err = c.Lookup(key)
	return bin, ok, err
}

// Lookup is Get that also says which tier served a hit: Hit for the
// local cache, Fetched for the remote tier (Built on a miss).
func (c *Cache) Lookup(key Key) (bin []byte, outcome Outcome, ok bool, err error) {
	if !c.Enabled() {
		return nil, Built, false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.LockTimeout)
	defer cancel()
	tree, err := c.lockTree(ctx, false)
	if err != nil {
		return nil, Built, false, err
	}
	defer tree.unlock()
	dir := c.keyDir(&key)
	kl, err := lockFile(ctx, filepath.Join(dir, keyLockName), false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			c.tracef("miss %s", dir)
			return c.getRemote(ctx, dir, &key)
		}
		return nil, Built, false, err
	}
	bin, ok, freed, err := c.lookup(dir, &key, key.encode())
	kl.unlock()
	c.release(freed)
	if !ok && err == nil {
		return c.getRemote(ctx, dir, &key)
	}
	return bin, Hit, ok, err
}

// getRemote is Get's remote step after a local miss: a binary the remote
// returns is stored locally in the background.
func (c *Cache) getRemote(ctx context.Context, dir string, key *Key) ([]byte, Outcome, bool, error) {
	if c.cfg.Remote == nil {
		return nil, Built, false, nil
	}
	bin, ok := c.cfg.Remote.Fetch(ctx, *key)
	if !ok || isQuarantined(dir, bin) {
		return nil, Built, false, nil
	}
	c.storeFetched(dir, key, key.encode(), bin)
	return bin, Fetched, true, nil
}

// release recounts the recorded size after entries were removed outside
// the size lock (corrupt entries: their size on disk may not be the size
// that was recorded).
func (c *Cache) release(freed int64) {
	if freed > 0 {
		c.updateSize(nil, 0, true, false)
	}
}

// entryNums returns the entry numbers n for which <n>.src exists in the
// listing, in increasing order.
func entryNums(ents []os.DirEntry, ext string) []int {
	var ns []int
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ext) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(name, ext))
		if err != nil || n < 0 || strconv.Itoa(n) != strings.TrimSuffix(name, ext) {
			continue
		}
		ns = append(ns, n)
	}
	sort.Ints(ns)
	return ns
}

func entryPath(dir string, n int, ext string) string {
	return filepath.Join(dir, strconv.Itoa(n)+ext)
}

// lookup finds key in dir; the caller holds the key lock, shared or
// exclusive. Corrupt entries met on the way are removed: readers may do so
// under a shared lock, since no writer can be active. It returns the bytes
// freed that way.
func (c *Cache) lookup(dir string, key *Key, src []byte) (bin []byte, ok bool, freed int64, err error) {
	ents, rerr := os.ReadDir(dir)
	if rerr != nil {
		if errors.Is(rerr, fs.ErrNotExist) {
			c.tracef("miss %s", dir)
			return nil, false, 0, nil
		}
		return nil, false, 0, opError("read directory", dir, rerr)
	}
	drop, _ := c.checkLoads(dir, ents)
	for _, n := range entryNums(ents, ".src") {
		srcPath := entryPath(dir, n, ".src")
		payload, _, serr := readEntryFile(srcPath, kindSrc, 0, maxSrcPayload)
		if serr != nil {
			if errors.Is(serr, fs.ErrNotExist) {
				continue
			}
			freed += c.drop(dir, n, serr)
			err = serr
			continue
		}
		if !bytes.Equal(payload, src) {
			k2, derr := decodeKey(payload)
			if derr != nil {
				derr = opError("read entry", srcPath, derr)
				freed += c.drop(dir, n, derr)
				err = derr
				continue
			}
			if !key.sameIdentity(&k2) {
				c.tracef("collision %s: entry %d holds another key", dir, n)
				continue
			}
		}
		binPath := entryPath(dir, n, ".bin")
		b, _, berr := readEntryFile(binPath, kindBin, xxhash.Sum64(payload), c.maxBin())
		if berr != nil {
			if errors.Is(berr, fs.ErrNotExist) {
				berr = opError("read entry", binPath, corruption("missing binary"))
			}
			freed += c.drop(dir, n, berr)
			return nil, false, freed, berr
		}
		if drop != nil && drop[xxhash.Sum64(b)] {
			freed += c.drop(dir, n, errCrashed)
			c.tracef("miss %s", dir)
			return nil, false, freed, nil
		}
		c.touch(binPath)
		c.tracef("hit %s (%d bytes)", binPath, len(b))
		return b, true, freed, nil
	}
	c.tracef("miss %s", dir)
	return nil, false, freed, err
}

// touch records an access to an entry.
func (c *Cache) touch(binPath string) {
	st, err := os.Stat(binPath)
	if err != nil {
		return
	}
	now := c.now()
	if d := now.Sub(st.ModTime()); d >= touchGranularity || d <= -touchGranularity {
		os.Chtimes(binPath, now, now)
	}
}

// drop removes entry n of dir after a failed check and returns its size.
func (c *Cache) drop(dir string, n int, why error) int64 {
	c.tracef("drop %s/%d: %v", dir, n, why)
	return removeEntry(dir, n)
}

// removeEntry removes <n>.src, then <n>.bin, and returns the bytes freed.
func removeEntry(dir string, n int) int64 {
	var freed int64
	for _, ext := range [...]string{".src", ".bin"} {
		p := entryPath(dir, n, ext)
		if st, err := os.Lstat(p); err == nil {
			if removeAny(p, st) == nil {
				freed += st.Size()
			}
		}
	}
	return freed
}

// removeAny removes what is at p: a file, a link, or a directory that
// stands where a file should be, with its contents.
func removeAny(p string, st os.FileInfo) error {
	if st.IsDir() {
		return os.RemoveAll(p)
	}
	return os.Remove(p)
}

// Put stores bin under key, replacing an entry with the same key. A binary
// outside the configured size limits is not stored and Put returns nil. A
// write failure that shows the disk unusable (full, read-only, permission)
// disables the cache and returns an error wrapping ErrUnavailable.
func (c *Cache) Put(key Key, bin []byte) error {
	if c.cfg.Remote != nil {
		c.cfg.Remote.Publish(key, bin)
	}
	if !c.Enabled() || !c.storable(len(bin)) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.LockTimeout)
	defer cancel()
	tree, err := c.lockTree(ctx, false)
	if err != nil {
		return c.degradeOn(err) // the root made unreadable (chmod) turns the cache off, saying so
	}
	defer tree.unlock()
	dir := c.keyDir(&key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return c.degradeOn(opError("create directory", dir, err))
	}
	kl, err := lockFile(ctx, filepath.Join(dir, keyLockName), true)
	if err != nil {
		return c.degradeOn(err)
	}
	err = c.store(dir, &key, key.encode(), bin)
	kl.unlock()
	return c.degradeOn(err)
}

// store writes an entry; the caller holds the key lock exclusively. The
// files are written and synced under temporary names, then renamed into
// place under the size lock together with the size update, so that the
// recorded size stays exact.
func (c *Cache) store(dir string, key *Key, src, bin []byte) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return opError("read directory", dir, err)
	}
	recount := false // something uncounted was removed
	// Leftovers of writers that died: no writer is active but us.
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	srcNums := entryNums(ents, ".src")
	used := make(map[int]bool, len(srcNums))
	slot := -1
	for _, n := range srcNums {
		srcPath := entryPath(dir, n, ".src")
		payload, _, serr := readEntryFile(srcPath, kindSrc, 0, maxSrcPayload)
		if serr != nil {
			if !errors.Is(serr, fs.ErrNotExist) {
				c.drop(dir, n, serr)
				recount = true
			}
			if _, err := os.Lstat(srcPath); err == nil {
				used[n] = true // could not remove it: leave the slot alone
			}
			continue
		}
		used[n] = true
		if slot >= 0 {
			continue
		}
		if k2, derr := decodeKey(payload); derr == nil && key.sameIdentity(&k2) {
			slot = n
		}
	}
	// .bin files without .src are leftovers of a crash between the renames.
	for _, n := range entryNums(ents, ".bin") {
		if !used[n] {
			os.Remove(entryPath(dir, n, ".bin"))
			recount = true
		}
	}
	var old int64
	if slot < 0 {
		for slot = 0; used[slot]; slot++ {
		}
	} else {
		old = entrySize(dir, slot)
	}
	if isQuarantined(dir, bin) {
		c.tracef("not stored %s: binary quarantined", dir)
		return nil
	}
	binPath, srcPath := entryPath(dir, slot, ".bin"), entryPath(dir, slot, ".src")
	binTmp, err := writeTemp(binPath, makeHeader(kindBin, bin, xxhash.Sum64(src)), bin, c.now(), c.hooks)
	if err != nil {
		return err
	}
	srcTmp, err := writeTemp(srcPath, makeHeader(kindSrc, src, xxhash.Sum64(src)), src, time.Time{}, c.hooks)
	if err != nil {
		os.Remove(binTmp)
		return err
	}
	delta := int64(2*headerSize+len(bin)+len(src)) - old
	var perr error
	publish := func() error {
		if perr = renameInto(binTmp, binPath, c.hooks); perr != nil {
			os.Remove(srcTmp)
			return perr
		}
		if perr = renameInto(srcTmp, srcPath, c.hooks); perr != nil {
			// The new .bin may not go with the old .src: remove both.
			removeEntry(dir, slot)
			return perr
		}
		if err := syncDir(dir); err != nil {
			c.tracef("%v", err)
		}
		c.tracef("store %s (%d bytes)", binPath, len(bin))
		return nil
	}
	if err := c.updateSize(publish, delta, recount, true); err != nil && perr == nil {
		c.tracef("size not updated: %v", err)
	}
	return perr
}

// entrySize returns the total size of the files of entry n.
func entrySize(dir string, n int) int64 {
	var sz int64
	for _, ext := range [...]string{".src", ".bin"} {
		if st, err := os.Lstat(entryPath(dir, n, ext)); err == nil {
			sz += st.Size()
		}
	}
	return sz
}

// GetOrBuild returns the binary for key from the cache or, on a miss, from
// build, which it then stores. While build runs, GetOrBuild holds the key's
// lock exclusively: another process (or goroutine) that needs the same key
// waits for it, up to Config.LockTimeout, and then loads the stored binary
// instead of building again; after the wait it builds anyway. The error is
// build's error or ctx's; cache failures are traced, never returned, and
// never prevent the build.
func (c *Cache) GetOrBuild(ctx context.Context, key Key, build func() ([]byte, error)) ([]byte, Outcome, error) {
	if !c.Enabled() {
		b, fetched, err := c.claimRemote(ctx, "", &key, nil, build)
		if fetched {
			return b, Fetched, nil
		}
		return b, Built, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, c.cfg.LockTimeout)
	defer cancel()
	src := key.encode()
	dir := c.keyDir(&key)
	lockPath := filepath.Join(dir, keyLockName)

	tree, err := c.lockTree(waitCtx, false)
	if err != nil {
		if ctx.Err() != nil {
			return nil, Built, ctx.Err()
		}
		c.tracef("build without cache: %v", c.degradeOn(err))
		b, err := build()
		return b, Built, err
	}
	defer tree.unlock()

	// Fast path: a shared lock, if free right now.
	outcome := Hit
	if kl, err := lockFile(nil, lockPath, false); err == nil {
		bin, ok, freed, _ := c.lookup(dir, &key, src)
		kl.unlock()
		c.release(freed)
		if ok {
			return bin, Hit, nil
		}
	} else if errors.Is(err, ErrBusy) {
		outcome = Waited
		c.tracef("wait for %s", dir)
	}
	// A local miss asks the remote before it creates the key's directory
	// and lock: a remote hit then costs the request and nothing more. (A
	// key that a local process holds is waited for instead.)
	if outcome == Hit && c.cfg.Remote != nil {
		if bin, ok := c.cfg.Remote.Fetch(firstLook(waitCtx), key); ok && !isQuarantined(dir, bin) {
			c.storeFetched(dir, &key, src, bin)
			return bin, Fetched, nil
		}
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.tracef("build without cache: %v", c.degradeOn(opError("create directory", dir, err)))
		b, err := build()
		return b, Built, err
	}
	kl, err := lockFile(waitCtx, lockPath, true)
	if err != nil {
		if ctx.Err() != nil {
			return nil, Built, ctx.Err()
		}
		c.tracef("wait for %s timed out after %v (DGEN_CACHE_LOCK_TIMEOUT); building anyway", dir, c.cfg.LockTimeout)
		b, err := build()
		if err != nil {
			return nil, Built, err
		}
		// Store only if the key is free now.
		if c.storable(len(b)) {
			if kl, lerr := lockFile(nil, lockPath, true); lerr == nil {
				serr := c.store(dir, &key, src, b)
				kl.unlock()
				if serr != nil {
					c.tracef("%v", c.degradeOn(serr))
				}
			}
		}
		return b, Built, nil
	}
	bin, ok, freed, _ := c.lookup(dir, &key, src)
	if ok {
		kl.unlock()
		c.release(freed)
		return bin, outcome, nil
	}
	b, fetched, err := c.claimRemote(waitCtx, dir, &key, src, func() ([]byte, error) {
		c.tracef("build %s", dir)
		return build()
	})
	if err != nil {
		kl.unlock()
		c.release(freed)
		return nil, Built, err
	}
	if fetched {
		kl.unlock()
		c.release(freed)
		return b, Fetched, nil
	}
	var serr error
	if c.storable(len(b)) {
		serr = c.store(dir, &key, src, b)
	}
	kl.unlock()
	if serr != nil {
		c.tracef("%v", c.degradeOn(serr))
	}
	c.release(freed)
	return b, Built, nil
}
