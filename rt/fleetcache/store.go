package fleetcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// store is what a remote store does: get and put entries by address, and
// hold a lease on an address.
type store interface {
	get(ctx context.Context, addr string, max int64) (b []byte, ok bool, err error)
	put(ctx context.Context, addr string, b []byte) error
	// claim takes the lease of addr for token and ttl if no one else holds
	// it, and reports whether token holds it now.
	claim(ctx context.Context, addr, token string, ttl time.Duration) (bool, error)
	// renew extends a lease that token holds.
	renew(ctx context.Context, addr, token string, ttl time.Duration) error
	// unclaim gives up a lease that token holds.
	unclaim(ctx context.Context, addr, token string) error
	close() error
}

func openStore(cfg *Config) (store, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("fleetcache: open %s: %w", Redact(cfg.URL), ErrConfig)
	}
	switch u.Scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("fleetcache: open %s: %v: %w", Redact(cfg.URL), err, ErrConfig)
		}
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = cfg.Timeout, cfg.Timeout, cfg.Timeout
		opt.MaxRetries = -1 // one try: a failure takes the remote out of use
		opt.PoolSize = 8
		opt.DisableIdentity = true
		return &redisStore{c: redis.NewClient(opt)}, nil
	case "http", "https":
		return &httpStore{
			base:   strings.TrimSuffix(cfg.URL, "/"),
			client: &http.Client{Timeout: cfg.Timeout},
			settle: cfg.Settle,
		}, nil
	}
	return nil, fmt.Errorf("fleetcache: open %s: unknown scheme %q: %w", Redact(cfg.URL), u.Scheme, ErrConfig)
}

// redisStore keeps entries as strings and leases as keys with an expiry.
type redisStore struct{ c *redis.Client }

const (
	redisEntryPrefix = "dgen:e:"
	redisLeasePrefix = "dgen:l:"
)

// Scripts that act on a lease only for the token that holds it.
var (
	renewScript   = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end return 0`)
	unclaimScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)
)

func (s *redisStore) get(ctx context.Context, addr string, max int64) ([]byte, bool, error) {
	b, err := s.c.Get(ctx, redisEntryPrefix+addr).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > max {
		return nil, false, &rejection{why: "larger than the maximum entry size"}
	}
	return b, true, nil
}

func (s *redisStore) put(ctx context.Context, addr string, b []byte) error {
	return s.c.Set(ctx, redisEntryPrefix+addr, b, 0).Err()
}

func (s *redisStore) claim(ctx context.Context, addr, token string, ttl time.Duration) (bool, error) {
	return s.c.SetNX(ctx, redisLeasePrefix+addr, token, ttl).Result()
}

func (s *redisStore) renew(ctx context.Context, addr, token string, ttl time.Duration) error {
	return renewScript.Run(ctx, s.c, []string{redisLeasePrefix + addr}, token, ttl.Milliseconds()).Err()
}

func (s *redisStore) unclaim(ctx context.Context, addr, token string) error {
	return unclaimScript.Run(ctx, s.c, []string{redisLeasePrefix + addr}, token).Err()
}

func (s *redisStore) close() error { return s.c.Close() }

// httpStore speaks bazel-remote's HTTP cache protocol under base.
type httpStore struct {
	base   string
	client *http.Client
	settle time.Duration
}

func (s *httpStore) url(addr string) string { return s.base + "/ac/" + addr }

// shown is the URL of addr for messages, its password hidden.
func (s *httpStore) shown(addr string) string { return Redact(s.url(addr)) }

// leaseAddr is the address of the lease record of addr.
func leaseAddr(addr string) string {
	h := sha256.Sum256([]byte("dgen fleet lease\x00" + addr))
	return hex.EncodeToString(h[:])
}

func (s *httpStore) do(ctx context.Context, method, addr string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url(addr), r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	return s.client.Do(req)
}

func (s *httpStore) get(ctx context.Context, addr string, max int64) ([]byte, bool, error) {
	resp, err := s.do(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, false, nil
	case resp.StatusCode != http.StatusOK:
		return nil, false, fmt.Errorf("GET %s: %s", s.shown(addr), resp.Status)
	case resp.ContentLength > max:
		return nil, false, &rejection{why: "larger than the maximum entry size"}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, false, fmt.Errorf("GET %s: %w", s.shown(addr), err)
	}
	if int64(len(b)) > max {
		return nil, false, &rejection{why: "larger than the maximum entry size"}
	}
	return b, true, nil
}

func (s *httpStore) put(ctx context.Context, addr string, b []byte) error {
	resp, err := s.do(ctx, http.MethodPut, addr, b)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT %s: %s", s.shown(addr), resp.Status)
	}
	return nil
}

// A lease record is "<token> <expiry in Unix milliseconds>".
func (s *httpStore) readLease(ctx context.Context, addr string) (token string, expiry time.Time, err error) {
	b, ok, err := s.get(ctx, leaseAddr(addr), 256)
	if err != nil || !ok {
		return "", time.Time{}, err
	}
	tok, ms, found := strings.Cut(string(b), " ")
	n, perr := strconv.ParseInt(ms, 10, 64)
	if !found || perr != nil {
		return "", time.Time{}, nil // a malformed record holds nothing
	}
	return tok, time.UnixMilli(n), nil
}

func (s *httpStore) writeLease(ctx context.Context, addr, token string, expiry time.Time) error {
	return s.put(ctx, leaseAddr(addr), []byte(token+" "+strconv.FormatInt(expiry.UnixMilli(), 10)))
}

func (s *httpStore) claim(ctx context.Context, addr, token string, ttl time.Duration) (bool, error) {
	tok, exp, err := s.readLease(ctx, addr)
	if err != nil {
		return false, err
	}
	if tok != "" && tok != token && time.Now().Before(exp) {
		return false, nil
	}
	if err := s.writeLease(ctx, addr, token, time.Now().Add(ttl)); err != nil {
		return false, err
	}
	// Read the record back twice, a settle time apart: a claimer that
	// wrote over ours after the first read shows at the second.
	for _, wait := range []time.Duration{s.settle, s.settle / 2} {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
		if tok, _, err = s.readLease(ctx, addr); err != nil || tok != token {
			return false, err
		}
	}
	return true, nil
}

func (s *httpStore) renew(ctx context.Context, addr, token string, ttl time.Duration) error {
	return s.writeLease(ctx, addr, token, time.Now().Add(ttl))
}

func (s *httpStore) unclaim(ctx context.Context, addr, token string) error {
	tok, _, err := s.readLease(ctx, addr)
	if err != nil || tok != token {
		return err
	}
	return s.writeLease(ctx, addr, token, time.Time{})
}

func (s *httpStore) close() error {
	s.client.CloseIdleConnections()
	return nil
}
