package diskcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
)

// File header, little endian:
//
//	0  [8]byte magic "dgenCach"
//	8  uint16  format version
//	10 uint16  kind (1 = .src, 2 = .bin)
//	12 uint32  reserved, zero
//	16 uint64  payload size
//	24 uint64  xxhash64 of the payload
//	32 uint64  xxhash64 of the encoded key the entry belongs to
//	40         payload
const (
	headerSize    = 40
	formatVersion = 1
	kindSrc       = 1
	kindBin       = 2
	fileMagic     = "dgenCach"
	tempPrefix    = ".tmp-"
)

func makeHeader(kind uint16, payload []byte, keySum uint64) []byte {
	h := make([]byte, headerSize)
	copy(h, fileMagic)
	binary.LittleEndian.PutUint16(h[8:], formatVersion)
	binary.LittleEndian.PutUint16(h[10:], kind)
	binary.LittleEndian.PutUint64(h[16:], uint64(len(payload)))
	binary.LittleEndian.PutUint64(h[24:], xxhash.Sum64(payload))
	binary.LittleEndian.PutUint64(h[32:], keySum)
	return h
}

// maxSrcPayload bounds the full key that a .src file holds.
const maxSrcPayload = 1 << 20

// openRegular opens path for reading only if it is a regular file: it
// follows no symbolic link and never blocks (a FIFO or a device in place of
// a file is refused, not waited on). A file of another type gives an error
// that matches ErrCorrupt.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) {
			return nil, nil, corruption("not a regular file")
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, corruption("not a regular file")
	}
	return f, st, nil
}

// readEntryFile reads and checks a .src or .bin file and returns its
// payload. wantKey, if not zero, is the key sum the header must carry; max
// bounds the payload size. It reads the header first and then only the
// payload that the header announces: a file whose size is not exactly
// that, or whose payload would exceed max, is refused unread. A file that
// fails a check gives an error that matches ErrCorrupt.
func readEntryFile(path string, kind uint16, wantKey uint64, max int64) (payload []byte, keySum uint64, err error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, 0, opError("read entry", path, err)
	}
	defer f.Close()
	size := st.Size()
	switch {
	case size == 0:
		return nil, 0, opError("read entry", path, corruption("empty file"))
	case size < headerSize:
		return nil, 0, opError("read entry", path, corruption("truncated header"))
	}
	h := make([]byte, headerSize)
	if _, err := io.ReadFull(f, h); err != nil {
		return nil, 0, opError("read entry", path, corruption("truncated header"))
	}
	n := binary.LittleEndian.Uint64(h[16:])
	switch {
	case string(h[:8]) != fileMagic:
		return nil, 0, opError("read entry", path, corruption("bad magic"))
	case n > uint64(max):
		return nil, 0, opError("read entry", path, corruption(fmt.Sprintf("payload of %d bytes exceeds the maximum %d", n, max)))
	case uint64(size) > headerSize+n:
		return nil, 0, opError("read entry", path, corruption("file larger than its header says"))
	case uint64(size) < headerSize+n:
		return nil, 0, opError("read entry", path, corruption("truncated"))
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(f, payload); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, 0, opError("read entry", path, corruption("truncated"))
		}
		return nil, 0, opError("read entry", path, err)
	}
	switch {
	case binary.LittleEndian.Uint16(h[8:]) != formatVersion:
		return nil, 0, opError("read entry", path,
			corruption(fmt.Sprintf("unsupported format version %d", binary.LittleEndian.Uint16(h[8:]))))
	case binary.LittleEndian.Uint16(h[10:]) != kind || binary.LittleEndian.Uint32(h[12:]) != 0:
		return nil, 0, opError("read entry", path, corruption("bad header"))
	case binary.LittleEndian.Uint64(h[24:]) != xxhash.Sum64(payload):
		return nil, 0, opError("read entry", path, corruption("checksum mismatch"))
	}
	keySum = binary.LittleEndian.Uint64(h[32:])
	if wantKey != 0 && keySum != wantKey {
		return nil, 0, opError("read entry", path, corruption("belongs to another key"))
	}
	return payload, keySum, nil
}

// writeHooks lets tests stop a writer at chosen points.
type writeHooks struct {
	// midWrite is called after the first half of a temporary file is
	// written, before the rest.
	midWrite func(final string)
	// beforeRename is called before a temporary file is renamed.
	beforeRename func(final string)
}

// writeTemp writes header and payload to a temporary file in the
// directory of final, syncs it, sets its modification time to mtime (if not
// zero) and returns its name.
func writeTemp(final string, header, payload []byte, mtime time.Time, hooks *writeHooks) (tmp string, err error) {
	f, err := os.CreateTemp(filepath.Dir(final), tempPrefix+"*")
	if err != nil {
		return "", opError("write entry", final, err)
	}
	name := f.Name() // not tmp: a failing return sets tmp to ""
	tmp = name
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(name)
		}
	}()
	half := len(payload) / 2
	if _, err = f.Write(header); err != nil {
		return "", opError("write entry", tmp, err)
	}
	if _, err = f.Write(payload[:half]); err != nil {
		return "", opError("write entry", tmp, err)
	}
	if hooks != nil && hooks.midWrite != nil {
		hooks.midWrite(final)
	}
	if _, err = f.Write(payload[half:]); err != nil {
		return "", opError("write entry", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return "", opError("sync entry", tmp, err)
	}
	if err = f.Close(); err != nil {
		return "", opError("write entry", tmp, err)
	}
	if !mtime.IsZero() {
		if err = os.Chtimes(tmp, mtime, mtime); err != nil {
			return "", opError("write entry", tmp, err)
		}
	}
	return tmp, nil
}

// renameInto renames a temporary file to its final name.
func renameInto(tmp, final string, hooks *writeHooks) error {
	if hooks != nil && hooks.beforeRename != nil {
		hooks.beforeRename(final)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return opError("rename entry", final, err)
	}
	return nil
}

// syncDir syncs a directory so that renames in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return opError("sync directory", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return opError("sync directory", dir, err)
	}
	return nil
}
