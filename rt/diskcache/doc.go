// Package diskcache is the persistent program-binary cache of the dgen
// runtime: the on-disk level behind the in-memory kernel/program cache.
//
// It stores opaque program binaries keyed by the device they were built for,
// the device image they were built from, the specialization-constant values
// and the build options. It knows nothing of OpenCL; the runtime package rt
// calls it around a program build.
//
// # Layout
//
// Entries live under the cache root in one directory per hashed key:
//
//	<root>/<device hash>/<image hash>/<spec hash>/<options hash>/<n>.src
//	<root>/<device hash>/<image hash>/<spec hash>/<options hash>/<n>.bin
//
// Every hash is 16 lower-case hexadecimal digits of a 64-bit xxhash. The
// device hash covers the platform name, device name, device version and
// driver version; the image hash covers the image id and the caller's hash
// of the image source. <n>.src holds the full key (not a copy of the image
// source) and <n>.bin the binary. Two keys whose hashes collide share a
// directory and are told apart by comparing the full key stored in <n>.src;
// n counts from 0.
//
// Both files start with a 40-byte header: a magic string, the format
// version, the file kind, the payload size, the xxhash64 of the payload and
// the xxhash64 of the key that the entry belongs to. A file that is empty,
// truncated, torn, altered or of another version fails these checks; the
// entry is then removed and reported as a miss, so that the caller rebuilds
// it. A corrupt binary is never returned.
//
// Every file is written to a temporary name in its final directory, synced,
// and renamed into place, and the directory is synced after the rename.
//
// # Files of any shape
//
// The cache writes only inside a root that it created, or that was empty,
// or that holds its tag (CACHEDIR.TAG, see https://bford.info/cachedir/);
// Open refuses any other directory with ErrUnavailable. Reads open regular
// files only, without following links and without blocking (a FIFO in
// place of a file is refused, not waited on), read the header first and
// then only the payload that it announces, up to Config.MaxImageSize: a
// file larger or smaller than its header says is dropped unread. A
// directory, link or FIFO where the cache expects a file, lock files
// included, is removed like a corrupt entry.
//
// A binary that passes every check can still crash the driver that loads
// it. The caller brackets each load with Loading, which leaves a locked
// marker in the key's directory for the duration; a marker found unlocked
// belongs to a process that died during the load, and the binary it names
// is dropped, and after a second such death quarantined for that key (see
// quarantine.go).
//
// # Remote tier
//
// Config.Remote (package rt/fleetcache) is asked after a local miss,
// before the key's directory is created; a binary it returns is stored
// locally in the background (Wait waits for it). GetOrBuild claims the key
// on the remote before it builds, so that one process of a fleet builds
// while the others wait for its entry, and publishes what it built.
//
// # Locking
//
// All locks are advisory locks taken with flock(2) through
// github.com/gofrs/flock, so that they vanish with the process that holds
// them: a crashed process never leaves a lock behind. The lock files are:
//
//   - <root>/tree.lock: held shared by every operation on an entry and
//     exclusively only to remove key directories and their lock files
//     (Clear and GC prune empty directories).
//   - <root>/size.lock: held exclusively to publish an entry (the two
//     renames) together with the size update, so that the recorded size is
//     exact, and to evict.
//   - <key directory>/lock: held shared by readers and exclusively by
//     writers of that key, and by a process that builds the key in
//     GetOrBuild, so that a second process that needs the same key waits
//     for the first and loads its binary instead of building it again.
//
// # Size and eviction
//
// <root>/size holds the total size in bytes of all .src and .bin files as a
// decimal number. It is updated under size.lock; a missing or malformed size
// file is recomputed by walking the tree, and every eviction pass rewrites it
// from the walk. The time of last access of an entry is the modification
// time of its .bin file, set when the entry is written and on every hit
// (at most once a second). When the total exceeds Config.MaxSize, the least
// recently used entries are removed until the total is at most half the
// maximum. Entries not accessed for Config.MaxAge are removed by every
// eviction pass and at Open (at most once a day). Binaries smaller than
// Config.MinImageSize or larger than Config.MaxImageSize are not stored.
//
// # Degraded mode
//
// A cache root that cannot be used (read-only, missing permission, full disk)
// makes Open return a disabled cache with an error wrapping ErrUnavailable
// that the caller reports once; a disabled cache misses on every Get, stores
// nothing, and GetOrBuild just builds.
package diskcache
