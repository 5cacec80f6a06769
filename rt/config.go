package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// CacheConfig configures a context's kernel/program cache: the in-memory
// level, the persistent level beneath it and the shared remote tier
// beneath that.
type CacheConfig = core.CacheConfig

// DiskCacheConfig configures the persistent program cache, a directory of
// program binaries shared by the processes of a machine. `dgen cache`
// lists, checks and clears it.
type DiskCacheConfig = core.DiskCacheConfig

// RemoteCacheConfig configures the shared tier beneath the persistent
// cache, a store that the machines of a fleet share. The tier is opt-in: a
// program that sets URL must import rt/fleetcache
// (import _ "github.com/dgen-go/dgen/rt/fleetcache"), else Open fails.
type RemoteCacheConfig = core.RemoteCacheConfig

// Config says which backend and devices a context opens, and how. A field
// left at its zero value is filled from its DGEN_ variable when the
// context opens (see ConfigFromEnv); a field that is set wins over its
// variable.
type Config = core.Config

// ConfigFromEnv returns the configuration that the environment asks for,
// reading variables through getenv (os.Getenv if nil): DGEN_DEVICE (a
// selector), DGEN_BACKEND (auto or a registered backend), DGEN_PROFILE
// (1 or 0), DGEN_ALLOC_POLICY (full, tagged or bestfit),
// DGEN_ALLOC_MAX_HELD (a byte count such as 512MiB; 0 for no bound),
// DGEN_TRACE (see Config.Trace), DGEN_TUNE (force, or a boolean: see
// Config.Retune), DGEN_SYNC_LAUNCHES (1 or 0: see Config.SyncLaunches) and
// the cache variables:
//
//	DGEN_CACHE_IN_MEM                     1 or 0 (default 1)
//	DGEN_IN_MEM_CACHE_EVICTION_THRESHOLD  bytes, K/M/G/T suffix allowed (default 0: off)
//	DGEN_PROGRAM_COMPILE_OPTIONS          extra build options (default none)
//	DGEN_CACHE_REMOTE                     the shared tier's store (rt/fleetcache, opt-in)
//
// and those of DiskCacheConfig's fields (DGEN_CACHE_DIR, DGEN_CACHE_PERSISTENT,
// ...). In a test binary the persistent cache is off unless DGEN_CACHE_DIR
// names a directory. A malformed value is an error that names the variable
// and, for a closed set, its valid values.
//
// With Config.Graphs left at GraphsAuto, Open and OpenConfig also read the
// variables that allow command graphs (Queue.Record) to use the device
// API's own graph objects:
//
//	DGEN_OPENCL_COMMAND_BUFFER            1 or 0 (default 1): OpenCL command buffers
//	DGEN_CUDA_GRAPH                       1 or 0 (default 1): CUDA graphs
//
// With one at 0, graphs on that backend replay as a loop of prepared
// commands, one backend call per launch.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	return core.ConfigFromEnv(getenv)
}
