package fleetcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/fleetcache/fleettest"
)

var testDevice = diskcache.Device{Platform: "Portable Computing Language", Name: "cpu-test", Version: "OpenCL 3.0 PoCL", DriverVersion: "6.0"}

func testKey(i int) diskcache.Key {
	return diskcache.Key{
		Device:      testDevice,
		ImageID:     "example.com/pkg.Prog" + strconv.Itoa(i),
		ImageHash:   uint64(i) * 0x9e3779b97f4a7c15,
		SpecConsts:  []byte{byte(i), 1, 2},
		Options:     "-cl-mad-enable",
		ProgramName: "Prog" + strconv.Itoa(i),
	}
}

func testBinary(i, size int) []byte {
	b := bytes.Repeat([]byte("bin"+strconv.Itoa(i)+"-"), size/5+1)
	return b[:size]
}

// stores starts one server of each kind.
func stores(t *testing.T) map[string]*fleettest.Server {
	return map[string]*fleettest.Server{"redis": fleettest.StartRedis(t), "http": fleettest.StartNginx(t)}
}

// syncBuffer is a log that tests read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// logger returns a logger that writes to s.
func (s *syncBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(s, nil)) }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openFleet opens a Fleet on url, unsigned unless mutate sets a secret.
func openFleet(t *testing.T, url string, mutate func(*Config)) *Fleet {
	t.Helper()
	cfg := Config{URL: url, InsecureUnsigned: true}
	if mutate != nil {
		mutate(&cfg)
	}
	f, err := Open(cfg)
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	t.Cleanup(func() { f.Close(5 * time.Second) })
	return f
}

// flush waits for f's background publishes.
func flush(f *Fleet) { f.bg.Wait() }

func TestRoundTrip(t *testing.T) {
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, secret := range []string{"", "fleet secret"} {
				a := openFleet(t, srv.URL, func(c *Config) { c.Secret = []byte(secret) })
				b := openFleet(t, srv.URL, func(c *Config) { c.Secret = []byte(secret) })
				key, bin := testKey(len(secret)), testBinary(1, 70000)
				ctx := context.Background()
				if _, ok := b.Fetch(ctx, key); ok {
					t.Fatalf("secret %q: fetch before publish hit", secret)
				}
				a.Publish(key, bin)
				flush(a)
				got, ok := b.Fetch(ctx, key)
				if !ok || !bytes.Equal(got, bin) {
					t.Fatalf("secret %q: fetch after publish: ok %v, %d bytes; want %d", secret, ok, len(got), len(bin))
				}
				other := key
				other.Options += " -DX"
				if _, ok := b.Fetch(ctx, other); ok {
					t.Fatalf("secret %q: fetch of another key hit", secret)
				}
				if s := a.Stats(); s.Publishes != 1 || s.Errors != 0 {
					t.Errorf("secret %q: publisher stats %+v", secret, s)
				}
				if s := b.Stats(); s.Hits != 1 || s.Misses != 2 || s.Errors != 0 {
					t.Errorf("secret %q: reader stats %+v", secret, s)
				}
			}
		})
	}
}

// TestRejected stores bad entries straight into the store: every one is
// counted as rejected and never returned.
func TestRejected(t *testing.T) {
	key, bin := testKey(7), testBinary(7, 4096)
	kb := key.Encode()
	good := sealEntry(kb, bin, nil)
	signed := sealEntry(kb, bin, []byte("right"))
	flip := func(e []byte, i int) []byte { c := bytes.Clone(e); c[i] ^= 0x40; return c }
	otherKey := testKey(8)
	cases := []struct {
		name   string
		entry  []byte
		secret string
	}{
		{"empty", []byte{}, ""},
		{"truncated", good[:len(good)/2], ""},
		{"header only", good[:entryHeader], ""},
		{"payload bit flipped", flip(good, entryHeader+len(kb)+100), ""},
		{"checksum bit flipped", flip(good, len(good)-1), ""},
		{"bad magic", flip(good, 0), ""},
		{"length altered", flip(good, 24), ""},
		{"another key inside", sealEntry(otherKey.Encode(), bin, nil), ""},
		{"garbage", bytes.Repeat([]byte{0xa5}, 5000), ""},
		{"unsigned where key is required", good, "right"},
		{"signed with another key", sealEntry(kb, bin, []byte("wrong")), "right"},
		{"signature bit flipped", flip(signed, len(signed)-3), "right"},
		{"signed payload altered", flip(signed, entryHeader+len(kb)+5), "right"},
		{"signed without a key to check", signed, ""},
	}
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range cases {
				f := openFleet(t, srv.URL, func(c *Config) { c.Secret = []byte(tc.secret) })
				if err := f.st.put(context.Background(), address(kb), tc.entry); err != nil {
					t.Fatalf("%s: put: %v", tc.name, err)
				}
				if got, ok := f.Fetch(context.Background(), key); ok {
					t.Errorf("%s: fetched %d bytes; want a miss", tc.name, len(got))
				}
				if s := f.Stats(); s.Rejected != 1 || s.Hits != 0 || s.Errors != 0 {
					t.Errorf("%s: stats %+v; want 1 rejected", tc.name, s)
				}
			}
			// The same address with a good entry is a hit.
			f := openFleet(t, srv.URL, nil)
			f.st.put(context.Background(), address(kb), good)
			if got, ok := f.Fetch(context.Background(), key); !ok || !bytes.Equal(got, bin) {
				t.Errorf("good entry: ok %v", ok)
			}
		})
	}
}

func TestModes(t *testing.T) {
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			key, bin := testKey(20), testBinary(20, 3000)
			ro := openFleet(t, srv.URL, func(c *Config) { c.Mode = ReadOnly })
			ro.Publish(key, bin)
			_, _, done := ro.Claim(ctx, key)
			done(bin)
			flush(ro)
			rw := openFleet(t, srv.URL, nil)
			if _, ok := rw.Fetch(ctx, key); ok {
				t.Fatalf("read-only mode published")
			}
			if s := ro.Stats(); s.Publishes != 0 {
				t.Errorf("read-only stats %+v", s)
			}
			rw.Publish(key, bin)
			flush(rw)
			wo := openFleet(t, srv.URL, func(c *Config) { c.Mode = WriteOnly })
			if _, ok := wo.Fetch(ctx, key); ok {
				t.Errorf("write-only mode fetched")
			}
			if _, ok, _ := wo.Claim(ctx, key); ok {
				t.Errorf("write-only mode claimed a fetched entry")
			}
			if s := wo.Stats(); s.Hits != 0 || s.Misses != 0 {
				t.Errorf("write-only stats %+v", s)
			}
			if _, ok := ro.Fetch(ctx, key); !ok {
				t.Errorf("read-only mode did not fetch")
			}
		})
	}
}

// TestBrokenRemote puts a fault-injecting proxy in front of real servers:
// every operation misses within about the timeout, the failure is counted,
// one warning is printed, and the remote backs off.
func TestBrokenRemote(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for name, srv := range stores(t) {
		for _, fault := range []struct {
			name string
			f    fleettest.Fault
		}{{"slow", fleettest.Slow}, {"garbage", fleettest.Garbage}, {"reset", fleettest.Reset}, {"refused", -1}} {
			t.Run(name+"/"+fault.name, func(t *testing.T) {
				p := fleettest.StartProxy(t, srv.Addr, 3*time.Second)
				p.Set(fault.f)
				addr := p.Addr
				if fault.f < 0 {
					addr = "127.0.0.1:" + strconv.Itoa(fleettest.FreePort(t))
				}
				url := strings.Replace(srv.URL, srv.Addr, addr, 1)
				var warn syncBuffer
				f := openFleet(t, url, func(c *Config) { c.Timeout = timeout; c.Logger = warn.logger() })
				ctx := context.Background()
				for i := 0; i < 3; i++ {
					t0 := time.Now()
					key := testKey(30 + i)
					bin, ok, done := f.Claim(ctx, key)
					if ok {
						t.Fatalf("claim %d hit %d bytes", i, len(bin))
					}
					done(testBinary(i, 100))
					if _, ok := f.Fetch(ctx, key); ok {
						t.Fatalf("fetch %d hit", i)
					}
					if d := time.Since(t0); d > 3*timeout {
						t.Errorf("claim and fetch %d took %v; want at most %v", i, d, 3*timeout)
					}
				}
				flush(f)
				if s := f.Stats(); s.Errors != 1 || s.Hits != 0 {
					t.Errorf("stats %+v; want 1 error (then the backoff), no hit", s)
				}
				if n := strings.Count(warn.String(), "level=WARN"); n != 1 {
					t.Errorf("%d warnings; want 1:\n%s", n, warn.String())
				}
			})
		}
	}
}

// TestClaimOneBuilder: goroutines with their own Fleets claim one key; one
// builds, the others get its entry.
func TestClaimOneBuilder(t *testing.T) {
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key, bin := testKey(40), testBinary(40, 20000)
			var mu sync.Mutex
			builds := 0
			var wg sync.WaitGroup
			for g := 0; g < 6; g++ {
				f := openFleet(t, srv.URL, nil)
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					got, ok, done := f.Claim(ctx, key)
					if !ok {
						mu.Lock()
						builds++
						mu.Unlock()
						time.Sleep(300 * time.Millisecond)
						done(bin)
						return
					}
					if !bytes.Equal(got, bin) {
						t.Errorf("claim returned another binary")
					}
				}()
			}
			wg.Wait()
			if builds != 1 {
				t.Errorf("%d builds; want 1", builds)
			}
		})
	}
}

// TestLeaseOfDeadBuilder: a builder that never calls done (it died) holds
// the key at most for the lease.
func TestLeaseOfDeadBuilder(t *testing.T) {
	const lease = 600 * time.Millisecond
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			key := testKey(50)
			// A builder that took the lease and died: no one renews it.
			dead := openFleet(t, srv.URL, func(c *Config) { c.Lease = lease })
			if won, err := dead.st.claim(context.Background(), address(key.Encode()), "dead", lease); !won || err != nil {
				t.Fatalf("claim on an empty store: %v, %v", won, err)
			}
			f := openFleet(t, srv.URL, func(c *Config) { c.Lease = lease })
			t0 := time.Now()
			_, ok, done := f.Claim(context.Background(), key)
			if ok {
				t.Fatal("hit")
			}
			done(nil)
			if d := time.Since(t0); d > lease+time.Second {
				t.Errorf("waited %v for a dead builder; want at most the lease %v and a poll", d, lease)
			}
			if s := f.Stats(); s.Waits != 1 {
				t.Errorf("stats %+v; want 1 wait", s)
			}
		})
	}
}

// TestTierConfig: the tier's configuration from what rt passes
// (diskcache.RemoteConfig, filled from rt.RemoteCacheConfig), and the
// refusals of a malformed one, which name the setting and hide the
// password.
func TestTierConfig(t *testing.T) {
	cases := []struct {
		rc      diskcache.RemoteConfig
		want    Config
		wantErr string
	}{
		{diskcache.RemoteConfig{URL: "redis://u:pw@h:6379/2", Mode: "read", Unsigned: true},
			Config{URL: "redis://u:pw@h:6379/2", Mode: ReadOnly, InsecureUnsigned: true}, ""},
		{diskcache.RemoteConfig{URL: "https://cache.example/x", Mode: "write", Key: "k", Timeout: 500 * time.Millisecond, Lease: time.Minute},
			Config{URL: "https://cache.example/x", Mode: WriteOnly, Secret: []byte("k"), Timeout: 500 * time.Millisecond, Lease: time.Minute}, ""},
		{diskcache.RemoteConfig{URL: "http://h", Key: "k"}, Config{URL: "http://h", Secret: []byte("k")}, ""},
		{diskcache.RemoteConfig{URL: "ftp://h/x", Key: "k"}, Config{}, "want a redis://"},
		{diskcache.RemoteConfig{URL: "redis://u:secretpw@h:1", Mode: "both", Key: "k"}, Config{}, `mode "both"`},
	}
	for _, tc := range cases {
		got, err := tierConfig(tc.rc)
		if err == nil {
			err = checkTier(tc.rc)
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secretpw") {
				t.Errorf("%+v: error %v; want one saying %s, without the password", tc.rc, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.URL != tc.want.URL || got.Mode != tc.want.Mode || string(got.Secret) != string(tc.want.Secret) ||
			got.Timeout != tc.want.Timeout || got.Lease != tc.want.Lease || got.InsecureUnsigned != tc.want.InsecureUnsigned {
			t.Errorf("%+v: got %+v, %v; want %+v", tc.rc, got, err, tc.want)
		}
	}
}

// TestWarnOnce: failures after the backoff are counted again, but warned
// about only once.
func TestWarnOnce(t *testing.T) {
	var warn syncBuffer
	url := "redis://127.0.0.1:" + strconv.Itoa(fleettest.FreePort(t))
	f := openFleet(t, url, func(c *Config) { c.Backoff = time.Nanosecond; c.Logger = warn.logger() })
	for i := 0; i < 3; i++ {
		time.Sleep(time.Millisecond)
		if _, ok := f.Fetch(context.Background(), testKey(i)); ok {
			t.Fatal("hit on a refused connection")
		}
	}
	if s := f.Stats(); s.Errors != 3 {
		t.Errorf("stats %+v; want 3 errors", s)
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings; want 1:\n%s", n, warn.String())
	}
}

func startRedisURL(t testing.TB) string { return fleettest.StartRedis(t).URL }
func startNginxURL(t testing.TB) string { return fleettest.StartNginx(t).URL }

// TestOpenUnsigned: a store without a secret is refused, with an error
// that names the key to set, unless the configuration opts in to an
// unsigned store; the environment's configuration likewise.
func TestOpenUnsigned(t *testing.T) {
	srv := fleettest.StartRedis(t)
	for _, tc := range []struct {
		name string
		rc   diskcache.RemoteConfig
		ok   bool
	}{
		{"no key", diskcache.RemoteConfig{}, false},
		{"key", diskcache.RemoteConfig{Key: "k"}, true},
		{"unsigned opt-in", diskcache.RemoteConfig{Unsigned: true}, true},
		{"key and opt-in", diskcache.RemoteConfig{Key: "k", Unsigned: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rc.URL = srv.URL
			cfg, err := tierConfig(tc.rc)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(cfg)
			if f != nil {
				f.Close(time.Second)
			}
			checkErr := diskcache.CheckRemote(tc.rc)
			tier, openErr := diskcache.OpenRemote(tc.rc)
			if tier != nil {
				tier.Close(time.Second)
			}
			for _, e := range []struct {
				via string
				err error
			}{{"Open", err}, {"diskcache.CheckRemote", checkErr}, {"diskcache.OpenRemote", openErr}} {
				switch {
				case tc.ok && e.err != nil:
					t.Errorf("%s: %v", e.via, e.err)
				case !tc.ok && (!errors.Is(e.err, ErrUnsigned) || !strings.Contains(fmt.Sprint(e.err), "DGEN_CACHE_REMOTE_KEY") ||
					!strings.Contains(fmt.Sprint(e.err), "DGEN_CACHE_REMOTE_UNSIGNED=insecure")):
					t.Errorf("%s: %v; want ErrUnsigned naming DGEN_CACHE_REMOTE_KEY and DGEN_CACHE_REMOTE_UNSIGNED=insecure", e.via, e.err)
				}
			}
		})
	}
}
