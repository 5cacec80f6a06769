// Package fleetcache is the shared tier beneath the persistent program
// cache (package rt/diskcache): a store that every node of a fleet reads and
// writes, so that a program is built once per fleet rather than once per
// node and per empty disk.
//
// # Stores
//
// Config.URL selects the store:
//
//   - redis://[user:pass@]host:port[/db] and rediss:// (TLS): a Redis
//     server, through github.com/redis/go-redis/v9. Entries are Redis
//     strings under "dgen:e:<address>"; leases are "dgen:l:<address>".
//   - http://host[:port][/prefix] and https://: the HTTP cache protocol of
//     bazel-remote: GET, PUT and HEAD on <prefix>/ac/<address>. It works
//     with any server that stores what is PUT and returns it on GET: nginx
//     with WebDAV (dav_methods PUT DELETE; create_full_put_path on), and
//     bazel-remote with --disable_http_ac_validation, in front of S3, GCS or
//     Azure. Entries are addressed by their key, not by their content, so
//     they live in bazel-remote's action-cache namespace (ac/), whose keys
//     are arbitrary; its cas/ namespace checks that an address is the
//     SHA-256 of the content.
//
// # Entries
//
// An entry's address is the SHA-256 of the full cache key (device, image,
// specialization constants, options) as rt/diskcache encodes it. The entry
// holds a header, the full key and the binary, followed by a SHA-256 of all
// of it, or, when Config.Secret is set, by an HMAC-SHA-256 under the secret.
// A fetched entry is used only if its size is within bounds, its trailer
// checks, and the key it holds is byte for byte the key asked for; any other
// entry is counted in Stats.Rejected and ignored, and the program is built.
// The binary then goes through the local cache's own checks.
//
// Whoever can write to an unsigned shared cache can run code on every node
// that reads from it. Set a secret (DGEN_CACHE_REMOTE_KEY) that only the
// nodes hold: entries without a valid signature are ignored. Open refuses
// a store without a secret (ErrUnsigned) unless the configuration opts in
// to an unsigned one (DGEN_CACHE_REMOTE_UNSIGNED=insecure,
// Config.InsecureUnsigned). Rejected
// entries are reported by one warning per process. A node never replaces
// a signed entry that it cannot verify (signed under another secret, or
// with none set here): a node with the wrong secret in read_write mode
// builds for itself but cannot overwrite the fleet's entries.
//
// # One build per key
//
// On a miss, Claim takes a lease on the key before the caller builds; other
// processes that miss the same key wait for the entry instead of building,
// for at most the lease: the builder renews its lease while it builds, and a
// builder that dies stops renewing it, so it lapses within Config.Lease and
// the next waiter takes it. On Redis the lease is SET NX PX with a random
// token, renewed and released only by its holder (a Lua compare-and-set).
// HTTP stores have no atomic create, so the lease there is optimistic: a
// claimer PUTs a lease record with its token, waits Config.Settle, and reads
// it back, twice; the claimer whose token is read back both times builds.
// Claimers whose writes land within the settle time of each other agree on
// one builder; a claimer that arrives later sees the lease and waits. A
// claimer that wins a lease looks for the entry once more before it builds,
// since the previous holder publishes before it lets go.
//
// # Failures
//
// A remote never fails a run. Every request has a deadline
// (Config.Timeout, 2 s by default). A failed request is counted in
// Stats.Errors, reported once per Fleet on Config.Warnings, and takes the
// remote out of use for Config.Backoff, during which every operation misses
// at once; the caller goes on with its local cache. Publishing runs in the
// background, a few entries at a time; an entry that finds no free slot is
// dropped and counted in Stats.Dropped.
package fleetcache
