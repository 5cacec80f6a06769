package fleetcache

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// Mode says which way entries flow between a node and the remote.
type Mode uint8

const (
	// ReadWrite fetches entries and publishes the programs the node
	// builds. It is the default.
	ReadWrite Mode = iota
	// ReadOnly fetches entries and publishes nothing: a node that runs
	// code but must not supply it.
	ReadOnly
	// WriteOnly publishes and never fetches: a node that warms the cache.
	WriteOnly
)

// String returns "read_write", "read" or "write".
func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "read"
	case WriteOnly:
		return "write"
	}
	return "read_write"
}

func (m Mode) reads() bool  { return m != WriteOnly }
func (m Mode) writes() bool { return m != ReadOnly }

// Default values of the configuration.
const (
	DefaultTimeout = 2 * time.Second
	DefaultLease   = 10 * time.Second
	DefaultSettle  = 100 * time.Millisecond
	DefaultBackoff = 30 * time.Second
	// DefaultMaxEntrySize bounds what a fetch reads: the default maximum
	// image size of the local cache plus room for the key.
	DefaultMaxEntrySize = 1<<30 + 1<<20
)

// Config configures a Fleet. Zero durations and sizes mean the defaults.
type Config struct {
	// URL is the store: redis://, rediss://, http:// or https://. An empty
	// URL means no remote.
	URL string
	// Mode restricts the direction of transfers.
	Mode Mode
	// Secret, if not empty, signs published entries with HMAC-SHA-256 and
	// makes fetches ignore entries without a valid signature. Open
	// refuses an empty Secret unless InsecureUnsigned is set.
	Secret []byte
	// InsecureUnsigned, with no Secret, lets Open use the store unsigned:
	// every node then runs whatever anyone who can write to the store puts
	// there, and PoCL's binaries are native code. It is for a store that
	// only trusted nodes can reach (DGEN_CACHE_REMOTE_UNSIGNED=insecure).
	InsecureUnsigned bool
	// Timeout bounds every request to the store.
	Timeout time.Duration
	// Lease is how long a builder's claim on a key lasts without renewal:
	// the most that a builder that died costs the processes that wait.
	Lease time.Duration
	// Settle is how long a claimer on an HTTP store waits before it reads
	// its lease record back.
	Settle time.Duration
	// Backoff is how long the remote stays out of use after a failure.
	Backoff time.Duration
	// MaxEntrySize is the largest entry read or written, in bytes.
	MaxEntrySize int64
	// Logger receives the one warning that a failing remote gives; nil
	// means no warning.
	Logger *slog.Logger
	// Trace, if not nil, receives one line per remote decision.
	Trace io.Writer
	// Events, if not nil, is called on every remote hit and publish, for
	// tracing. It must not block.
	Events func(Event)
}

// Event reports a remote hit or a completed publish.
type Event = diskcache.RemoteEvent

// EventOp is the kind of an Event.
type EventOp = diskcache.RemoteOp

// The event kinds.
const (
	// Hit is a binary fetched from the remote.
	Hit = diskcache.RemoteHit
	// Publish is a binary stored on the remote.
	Publish = diskcache.RemotePublish
)

// ParseMode parses "read_write" (or ""), "read" or "write", as
// rt.RemoteMode spells them.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "read_write":
		return ReadWrite, nil
	case "read":
		return ReadOnly, nil
	case "write":
		return WriteOnly, nil
	}
	return ReadWrite, fmt.Errorf("fleetcache: mode %q: want read, write or read_write: %w", s, ErrConfig)
}

// ErrUnsigned reports a remote configured with neither a signing key nor
// the opt-in to an unsigned store.
var ErrUnsigned = errors.New("remote cache without a signing key")

// check reports a configuration that Open refuses: a malformed URL, or a
// store without a secret or the opt-in to an unsigned one.
func (c *Config) check() error {
	if err := checkURL(c.URL); err != nil {
		return fmt.Errorf("fleetcache: open %s: %v: %w", Redact(c.URL), err, ErrConfig)
	}
	if len(c.Secret) == 0 && !c.InsecureUnsigned {
		return fmt.Errorf("fleetcache: %s: %w: anyone who can write to the store would run code on every node; "+
			"set DGEN_CACHE_REMOTE_KEY (Config.Secret) to a secret that only the nodes hold, "+
			"or DGEN_CACHE_REMOTE_UNSIGNED=insecure (Config.InsecureUnsigned) for a store that only trusted nodes can write to",
			Redact(c.URL), ErrUnsigned)
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	switch u.Scheme {
	case "redis", "rediss", "http", "https":
	default:
		return errors.New("want a redis://, rediss://, http:// or https:// URL")
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

// Redact returns the URL s with its password hidden, for messages.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(malformed URL)"
	}
	return u.Redacted()
}

func (c *Config) fill() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxEntrySize <= 0 {
		c.MaxEntrySize = DefaultMaxEntrySize
	}
}
