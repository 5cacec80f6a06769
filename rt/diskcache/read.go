package diskcache

import "github.com/cespare/xxhash/v2"

// ReadBinary returns the binary of the entry e (as List returns it),
// checked against its checksum and its key, for tools that show what an
// entry holds. It takes no lock and leaves the entry's access time alone,
// and works on a cache opened only to manage it (Persistent false).
func (c *Cache) ReadBinary(e EntryInfo) ([]byte, error) {
	key := Key{Device: e.Device, ImageID: e.ImageID, ImageHash: e.ImageHash, SpecConsts: e.SpecConsts,
		Options: e.Options, ProgramName: e.ProgramName}
	b, _, err := readEntryFile(e.Path, kindBin, xxhash.Sum64(key.encode()), c.maxBin())
	return b, err
}
