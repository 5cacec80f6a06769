package diskcache

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Helper processes: the test binary re-executes itself with helperEnv set
// to a mode; TestMain runs the mode instead of the tests.
const helperEnv = "DGEN_DISKCACHE_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var testDevice = Device{Platform: "Portable Computing Language", Name: "cpu-test", Version: "OpenCL 3.0 PoCL", DriverVersion: "6.0"}

func testKey(i int) Key {
	return Key{
		Device:      testDevice,
		ImageID:     "example.com/pkg.Prog" + strconv.Itoa(i),
		ImageHash:   uint64(i) * 0x9e3779b97f4a7c15,
		SpecConsts:  []byte{byte(i), 1, 2},
		Options:     "-cl-mad-enable",
		ProgramName: "Prog" + strconv.Itoa(i),
	}
}

// payload returns distinctive bytes for key: its key sum repeated.
func payload(k Key, size int) []byte {
	b := make([]byte, size)
	seed := xxhash.Sum64(k.encode())
	for i := 0; i+8 <= size; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], seed+uint64(i))
	}
	return b
}

func helperCmd(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func openTest(t testing.TB, dir string, mutate func(*Config), setup func(*Cache)) *Cache {
	t.Helper()
	cfg := DefaultConfig(dir)
	cfg.LockTimeout = 10 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := open(cfg, setup)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return c
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", path)
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func countLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return 0
		}
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func runHelper(mode string) error {
	dir := os.Getenv("DC_DIR")
	cfg := DefaultConfig(dir)
	cfg.LockTimeout = time.Duration(envInt("DC_WAIT_MS", 10000)) * time.Millisecond
	cfg.MaxSize = int64(envInt("DC_MAX", 0))
	var hooks *writeHooks
	marker := os.Getenv("DC_MARKER")
	hang := func(string) {
		os.WriteFile(marker, nil, 0o644)
		time.Sleep(time.Hour)
	}
	switch os.Getenv("DC_HOOK") {
	case "mid":
		hooks = &writeHooks{midWrite: func(p string) {
			if filepath.Ext(p) == ".bin" {
				hang(p)
			}
		}}
	case "rename-src":
		hooks = &writeHooks{beforeRename: func(p string) {
			if filepath.Ext(p) == ".src" {
				hang(p)
			}
		}}
	}
	c, err := open(cfg, func(c *Cache) { c.hooks = hooks })
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch mode {
	case "put": // store key DC_KEY (hooks may stop it)
		k := testKey(envInt("DC_KEY", 0))
		return c.Put(k, payload(k, envInt("DC_SIZE", 1<<20)))
	case "slowbuild", "holdbuild": // build DC_KEY slowly, counting builds in DC_COUNT
		k := testKey(envInt("DC_KEY", 0))
		bin, _, err := c.GetOrBuild(ctx, k, func() ([]byte, error) {
			if err := appendLine(os.Getenv("DC_COUNT"), "helper"); err != nil {
				return nil, err
			}
			os.WriteFile(marker, nil, 0o644)
			if mode == "holdbuild" {
				time.Sleep(time.Hour)
			}
			time.Sleep(time.Second)
			return []byte("built by helper"), nil
		})
		if err == nil && string(bin) != "built by helper" {
			err = fmt.Errorf("got %q", bin)
		}
		return err
	case "crashload": // get DC_KEY and die "in the driver" while loading it
		k := testKey(envInt("DC_KEY", 0))
		bin, ok, err := c.Get(k)
		if !ok {
			return fmt.Errorf("crashload: miss (%v)", err)
		}
		c.Loading(k, bin)
		os.Exit(3) // as a driver that segfaults on the binary would
	case "hammer":
		return hammer(c, envInt("DC_ID", 0), envInt("DC_KEYS", 40), envInt("DC_ROUNDS", 3))
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// hammer puts and gets keys shared by all processes (0..keys/2) and keys of
// its own, checking every byte it gets.
func hammer(c *Cache, id, keys, rounds int) error {
	ctx := context.Background()
	for r := 0; r < rounds; r++ {
		for i := 0; i < keys; i++ {
			n := i
			if i >= keys/2 {
				n = 1000*(id+1) + i
			}
			k := testKey(n)
			want := payload(k, 512+(n%7)*1024)
			switch (i + r + id) % 3 {
			case 0:
				if err := c.Put(k, want); err != nil {
					return fmt.Errorf("put %d: %v", n, err)
				}
			case 1:
				got, ok, _ := c.Get(k)
				if ok && !bytes.Equal(got, want) {
					return fmt.Errorf("get %d: wrong bytes (%d bytes)", n, len(got))
				}
			case 2:
				got, _, err := c.GetOrBuild(ctx, k, func() ([]byte, error) { return want, nil })
				if err != nil {
					return fmt.Errorf("getorbuild %d: %v", n, err)
				}
				if !bytes.Equal(got, want) {
					return fmt.Errorf("getorbuild %d: wrong bytes", n)
				}
			}
		}
	}
	return nil
}
