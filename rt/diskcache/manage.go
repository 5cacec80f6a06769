package diskcache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// EntryInfo describes one cache entry.
type EntryInfo struct {
	Path        string    `json:"path"` // the .bin file
	DeviceHash  string    `json:"device_hash"`
	Device      Device    `json:"device"`
	ImageID     string    `json:"image_id"`
	ImageHash   uint64    `json:"image_hash"`
	ProgramName string    `json:"program_name,omitempty"`
	Options     string    `json:"options"`
	SpecConsts  []byte    `json:"spec_consts,omitempty"`
	Size        int64     `json:"size"` // bytes of .src and .bin together
	LastAccess  time.Time `json:"last_access"`
	// Err is set when the entry's key cannot be read; the other fields
	// but Path, DeviceHash, Size and LastAccess are then empty.
	Err string `json:"error,omitempty"`
}

// List returns every entry, least recently used first. It reads keys
// without checking binaries; Verify checks them.
func (c *Cache) List() ([]EntryInfo, error) {
	entries, err := c.scan(false)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].access.Before(entries[j].access) })
	out := make([]EntryInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, c.info(e))
	}
	return out, nil
}

func (c *Cache) info(e entryStat) EntryInfo {
	rel, _ := filepath.Rel(c.root, e.dir)
	devHash, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	info := EntryInfo{Path: entryPath(e.dir, e.n, ".bin"), DeviceHash: devHash, Size: e.size, LastAccess: e.access}
	payload, _, err := readEntryFile(entryPath(e.dir, e.n, ".src"), kindSrc, 0, maxSrcPayload)
	if err == nil {
		var k Key
		if k, err = decodeKey(payload); err == nil {
			info.Device, info.ImageID, info.ImageHash = k.Device, k.ImageID, k.ImageHash
			info.ProgramName, info.Options, info.SpecConsts = k.ProgramName, k.Options, k.SpecConsts
			return info
		}
	}
	info.Err = err.Error()
	return info
}

// Stats summarizes the cache.
type Stats struct {
	Dir          string        `json:"dir"`
	Enabled      bool          `json:"enabled"`
	Entries      int           `json:"entries"`
	Size         int64         `json:"size"`          // bytes, from a walk
	RecordedSize int64         `json:"recorded_size"` // bytes, from the size file; -1 if missing or malformed
	MaxSize      int64         `json:"max_size"`
	MaxAge       time.Duration `json:"max_age_ns"`
	Devices      []DeviceStats `json:"devices"`
}

// DeviceStats summarizes the entries of one device.
type DeviceStats struct {
	Hash    string `json:"hash"`
	Device  Device `json:"device"`
	Entries int    `json:"entries"`
	Size    int64  `json:"size"`
}

// Stat returns totals, overall and per device.
func (c *Cache) Stat() (Stats, error) {
	s := Stats{Dir: c.root, Enabled: c.Enabled(), MaxSize: c.cfg.MaxSize, MaxAge: c.cfg.MaxAge, RecordedSize: -1}
	if n, ok := readSizeFile(filepath.Join(c.root, sizeFileName)); ok {
		s.RecordedSize = n
	}
	entries, err := c.scan(false)
	if err != nil {
		return s, err
	}
	byDev := map[string]*DeviceStats{}
	for _, e := range entries {
		info := c.info(e)
		d := byDev[info.DeviceHash]
		if d == nil {
			d = &DeviceStats{Hash: info.DeviceHash}
			byDev[info.DeviceHash] = d
		}
		if d.Device == (Device{}) {
			d.Device = info.Device
		}
		d.Entries++
		d.Size += e.size
		s.Entries++
		s.Size += e.size
	}
	for _, d := range byDev {
		s.Devices = append(s.Devices, *d)
	}
	sort.Slice(s.Devices, func(i, j int) bool { return s.Devices[i].Hash < s.Devices[j].Hash })
	return s, nil
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Checked int        `json:"checked"`
	Bad     []BadEntry `json:"bad"`
	Removed int        `json:"removed"`
	Skipped int        `json:"skipped"` // entries locked by another process
}

// BadEntry is an entry that failed verification.
type BadEntry struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Verify checks the header and checksum of every file of every entry and
// reports the bad ones; with remove set it also removes them.
func (c *Cache) Verify(remove bool) (VerifyReport, error) {
	var rep VerifyReport
	entries, err := c.scan(false)
	if err != nil {
		return rep, err
	}
	var freed int64
	for _, e := range entries {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l, err := lockFile(ctx, filepath.Join(e.dir, keyLockName), false)
		cancel()
		if err != nil {
			rep.Skipped++
			continue
		}
		rep.Checked++
		srcPath := entryPath(e.dir, e.n, ".src")
		payload, _, err := readEntryFile(srcPath, kindSrc, 0, maxSrcPayload)
		if err == nil {
			if _, derr := decodeKey(payload); derr != nil {
				err = opError("read entry", srcPath, derr)
			}
		}
		if err == nil {
			_, _, err = readEntryFile(entryPath(e.dir, e.n, ".bin"), kindBin, xxhash.Sum64(payload), c.maxBin())
			if errors.Is(err, fs.ErrNotExist) {
				err = opError("read entry", entryPath(e.dir, e.n, ".bin"), corruption("missing binary"))
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			rep.Bad = append(rep.Bad, BadEntry{Path: entryPath(e.dir, e.n, ".bin"), Error: err.Error()})
			if remove {
				freed += c.drop(e.dir, e.n, err)
				rep.Removed++
			}
		}
		l.unlock()
	}
	c.release(freed)
	return rep, nil
}

// ClearReport is the result of Clear.
type ClearReport struct {
	Removed int   `json:"removed"`
	Freed   int64 `json:"freed"`
	Skipped int   `json:"skipped"` // entries locked by another process
}

// Clear removes every entry if match is empty, and otherwise the entries of
// the devices whose hash starts with match or whose platform or device name
// contains it (ignoring case). Entries in use by another process for more
// than a second are skipped.
func (c *Cache) Clear(match string) (ClearReport, error) {
	var rep ClearReport
	entries, err := c.scan(false)
	if err != nil {
		return rep, err
	}
	lower := strings.ToLower(match)
	for _, e := range entries {
		if match != "" {
			info := c.info(e)
			if !strings.HasPrefix(info.DeviceHash, lower) &&
				!strings.Contains(strings.ToLower(info.Device.Name), lower) &&
				!strings.Contains(strings.ToLower(info.Device.Platform), lower) {
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l, err := lockFile(ctx, filepath.Join(e.dir, keyLockName), true)
		cancel()
		if err != nil {
			rep.Skipped++
			continue
		}
		rep.Freed += removeEntry(e.dir, e.n)
		rep.Removed++
		if match == "" {
			cleanDir(e.dir)
		}
		l.unlock()
	}
	c.tracef("clear %q: removed %d entries (%d bytes)", match, rep.Removed, rep.Freed)
	if _, err := os.Stat(c.root); err == nil {
		c.prune()
		c.release(rep.Freed + 1) // recount: leftovers were removed too
	}
	return rep, nil
}
