package rt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/fleetcache" // the remote tier is opt-in
	"github.com/dgen-go/dgen/rt/fleetcache/fleettest"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

// TestRemoteTier builds a program in one context and loads it in a second
// one with an empty local cache from a real store (Redis, nginx WebDAV):
// the second builds nothing, runs correctly, and traces the remote hit; the
// first traces the publish.
func TestRemoteTier(t *testing.T) {
	stores := map[string]*fleettest.Server{"redis": fleettest.StartRedis(t), "http": fleettest.StartNginx(t)}
	for name, srv := range stores {
		t.Run(name, func(t *testing.T) {
			src := uniqueSource("7")
			open := func() (*rt.Context, *trace.Recorder, *bytes.Buffer) {
				var warn bytes.Buffer
				cc := defaultCacheConfig()
				cc.Disk = rt.DiskCacheConfig(core.DefaultDiskCache(t.TempDir()))
				cc.Remote.URL, cc.Remote.Key = srv.URL, "test key"
				tr := trace.New()
				rec := &trace.Recorder{}
				tr.Subscribe(rec)
				sel := os.Getenv("DGEN_DEVICE")
				if sel == "" {
					sel = "cpu"
				}
				ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: sel, Cache: &cc, Tracer: tr, Logger: slog.New(slog.NewTextHandler(&warn, nil))}))
				if err != nil {
					testenv.SkipWithoutDevice(t, err)
					t.Fatal(err)
				}
				return ctx, rec, &warn
			}
			cacheOps := func(rec *trace.Recorder) string {
				var ops []string
				for _, e := range rec.Events() {
					if e.Kind == trace.CacheEvent {
						ops = append(ops, e.Cache.Op.String())
					}
				}
				return strings.Join(ops, " ")
			}
			img := &core.ProgramImage{ID: "test.Remote", Source: src}
			// Each lookup counts once, at the tier that served it: a
			// cold build is one remote miss (not two), and a remote hit
			// is not also a disk hit.
			for i, want := range []struct {
				builds, diskHits, remoteHits, remoteMisses, publishes int64
				ops                                                   string
			}{
				{1, 0, 0, 1, 1, "build remote_publish"},
				{0, 0, 1, 0, 0, "remote_hit"},
			} {
				ctx, rec, warn := open()
				spec := core.NewKernelSpec(img, "fill")
				k, _, err := cx(ctx).SpawnKernel(spec, cq(ctx.Queue()))
				if err != nil {
					t.Fatal(err)
				}
				if got := runFill(t, ctx, ctx.Queue(), (*raw.Kernel)(k), 4)[3]; got != 7 {
					t.Errorf("context %d: value %d; want 7", i, got)
				}
				k.Release()
				if err := ctx.Close(); err != nil { // waits for the publish
					t.Fatal(err)
				}
				s := ctx.Stats().Cache
				if s.Builds != want.builds || s.DiskHits != want.diskHits || s.Remote.Hits != want.remoteHits || s.Remote.Misses != want.remoteMisses ||
					s.Remote.Publishes != want.publishes || s.Remote.Errors != 0 || s.MemHits != 0 {
					t.Errorf("context %d: stats %+v; want %d builds, %d disk hits, %d remote hits, %d remote misses, %d publishes", i, s, want.builds, want.diskHits, want.remoteHits, want.remoteMisses, want.publishes)
				}
				if got := cacheOps(rec); got != want.ops {
					t.Errorf("context %d: cache events %q; want %q", i, got, want.ops)
				}
				if warn.Len() != 0 {
					t.Errorf("context %d warned: %s", i, warn.String())
				}
			}
		})
	}
}

// TestRemoteDownWarnsOnce: a remote that refuses connections costs one
// warning and no failed build.
func TestRemoteDownWarnsOnce(t *testing.T) {
	var warn bytes.Buffer
	port := fleettest.FreePort(t)
	ctx := openCacheLogged(t, &warn, func(c *rt.CacheConfig) {
		c.Remote.URL = "redis://127.0.0.1:" + itoa(port)
		c.Remote.Key = "test key"
	})
	for i := range 3 {
		p, err := raw.Build(ctx, "p", uniqueSource(itoa(i)), "")
		if err != nil {
			t.Fatal(err)
		}
		p.Release()
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings; want 1:\n%s", n, warn.String())
	}
	if s := ctx.Stats().Cache; s.Builds != 3 || s.Remote.Errors != 1 {
		t.Errorf("stats %+v; want 3 builds, 1 remote error", s)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestRemoteUnsignedRefused: a remote tier without a signing key fails
// Open with an error that says how to set one, unless the configuration
// opts in to an unsigned store by DGEN_CACHE_REMOTE_UNSIGNED=insecure.
func TestRemoteUnsignedRefused(t *testing.T) {
	srv := fleettest.StartRedis(t)
	for _, tc := range []struct {
		name, env, value string
		ok               bool
	}{
		{"no key", "", "", false},
		{"key", "DGEN_CACHE_REMOTE_KEY", "k", true},
		{"unsigned opt-in", "DGEN_CACHE_REMOTE_UNSIGNED", "insecure", true},
		{"opt-in misspelt", "DGEN_CACHE_REMOTE_UNSIGNED", "yes", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, err := rt.ConfigFromEnv(func(k string) string {
				return map[string]string{"DGEN_CACHE_REMOTE": srv.URL, "DGEN_CACHE_DIR": dir, tc.env: tc.value}[k]
			})
			if err == nil {
				cfg.Backend, cfg.Device = rt.Backend(testenv.Backend()), testenv.Device()
				var ctx *rt.Context
				if ctx, err = rt.OpenConfig(withEnv(t, cfg)); err == nil {
					ctx.Close()
				}
			}
			switch {
			case tc.ok && err != nil:
				t.Errorf("open: %v", err)
			case !tc.ok && (err == nil || !strings.Contains(err.Error(), "DGEN_CACHE_REMOTE_UNSIGNED") ||
				(tc.env == "" && (!errors.Is(err, fleetcache.ErrUnsigned) || !strings.Contains(err.Error(), "set DGEN_CACHE_REMOTE_KEY")))):
				t.Errorf("open: %v; want an error that says to set DGEN_CACHE_REMOTE_KEY (or the opt-in)", err)
			}
		})
	}
}

// TestDriverCrashQuarantined forges an entry whose checksum is valid but
// whose binary is truncated to a quarter: loading it makes PoCL abort. The process that
// loads it dies; the next one finds the marker of that load, drops the
// binary, rebuilds and runs correctly.
func TestDriverCrashQuarantined(t *testing.T) {
	if os.Getenv("DGEN_DEVICE") != "" && os.Getenv("DGEN_DEVICE") != "cpu" {
		t.Skip("runs on the CPU device")
	}
	dir := t.TempDir()
	src := uniqueSource("42")
	if s := runChild(t, dir, src); s.Stats.Builds != 1 {
		t.Fatalf("first run: %+v", s.Stats)
	}
	var bins []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".bin") {
			bins = append(bins, p)
		}
		return nil
	})
	if len(bins) != 1 {
		t.Fatalf("%d binaries in the cache; want 1", len(bins))
	}
	// Reseal the binary truncated to a few bytes, with a valid header.
	b, err := os.ReadFile(bins[0])
	if err != nil {
		t.Fatal(err)
	}
	payload := b[40 : 40+(len(b)-40)/4]
	h := bytes.Clone(b[:40])
	binary.LittleEndian.PutUint64(h[16:], uint64(len(payload)))
	binary.LittleEndian.PutUint64(h[24:], xxhash.Sum64(payload))
	if err := os.WriteFile(bins[0], append(h, payload...), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCacheChild$", "-test.v")
	cmd.Env = append(os.Environ(), "DGEN_CACHE_DIR="+dir, "DGEN_CACHETEST_SOURCE="+src, "DGEN_DEVICE=cpu")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("PoCL loaded a binary truncated to a quarter without crashing; the test needs a binary that crashes it:\n%s", out)
	}
	s := runChild(t, dir, src)
	if s.Value != 42 {
		t.Fatalf("after the crash: value %d; want 42", s.Value)
	}
	if s.Stats.Builds != 1 {
		t.Errorf("after the crash: %+v; want the binary dropped and rebuilt", s.Stats)
	}
}
