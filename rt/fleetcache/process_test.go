package fleetcache

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/fleetcache/fleettest"
)

// Helper processes: the test binary re-executes itself with helperEnv set;
// TestMain then runs one node of a fleet instead of the tests.
const helperEnv = "DGEN_FLEETCACHE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		if err := runNode(); err != nil {
			fmt.Fprintln(os.Stderr, "node:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runNode is one node: an empty local cache under NODE_DIR, the remote
// DGEN_CACHE_REMOTE, and NODE_KEYS keys got or built in turn (each build
// takes NODE_BUILD and is logged to NODE_LOG); every binary is checked.
func runNode() error {
	keys, _ := strconv.Atoi(os.Getenv("NODE_KEYS"))
	buildTime, _ := time.ParseDuration(os.Getenv("NODE_BUILD"))
	timeout, _ := time.ParseDuration(os.Getenv("DGEN_CACHE_REMOTE_TIMEOUT"))
	rcfg, err := tierConfig(diskcache.RemoteConfig{URL: os.Getenv("DGEN_CACHE_REMOTE"), Mode: os.Getenv("DGEN_CACHE_REMOTE_MODE"),
		Key: os.Getenv("DGEN_CACHE_REMOTE_KEY"), Unsigned: os.Getenv("DGEN_CACHE_REMOTE_UNSIGNED") == "insecure", Timeout: timeout})
	if err != nil {
		return err
	}
	rcfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	fleet, err := Open(rcfg)
	if err != nil {
		return err
	}
	cfg := diskcache.DefaultConfig(os.Getenv("NODE_DIR"))
	cfg.LockTimeout = 30 * time.Second
	cfg.Remote = fleet
	c, err := diskcache.Open(cfg)
	if err != nil {
		return err
	}
	if ready := os.Getenv("NODE_READY"); ready != "" {
		os.WriteFile(ready, nil, 0o644)
	}
	outcomes := map[diskcache.Outcome]int{}
	for i := 0; i < keys; i++ {
		bin, outcome, err := c.GetOrBuild(context.Background(), testKey(i), func() ([]byte, error) {
			f, err := os.OpenFile(os.Getenv("NODE_LOG"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(f, "%d\n", i)
			f.Close()
			time.Sleep(buildTime)
			return testBinary(i, 50000), nil
		})
		if err != nil {
			return fmt.Errorf("key %d: %v", i, err)
		}
		if !bytes.Equal(bin, testBinary(i, 50000)) {
			return fmt.Errorf("key %d: wrong binary (%s)", i, outcome)
		}
		outcomes[outcome]++
	}
	fleet.Close(5 * time.Second)
	fmt.Printf("outcomes %v stats %+v\n", outcomes, fleet.Stats())
	return nil
}

type node struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func startNodes(t *testing.T, n int, env ...string) []*node {
	t.Helper()
	nodes := make([]*node, n)
	for i := range nodes {
		nd := &node{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		nd.cmd.Env = append(os.Environ(), append([]string{helperEnv + "=1",
			"NODE_DIR=" + t.TempDir(), "NODE_READY=" + filepath.Join(t.TempDir(), "ready")}, env...)...)
		nd.cmd.Stdout, nd.cmd.Stderr = &nd.stdout, &nd.stderr
		nodes[i] = nd
	}
	for _, nd := range nodes {
		if err := nd.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}

func waitNodes(t *testing.T, nodes []*node) {
	t.Helper()
	for i, nd := range nodes {
		if err := nd.cmd.Wait(); err != nil {
			t.Errorf("node %d: %v\n%s%s", i, err, nd.stdout.String(), nd.stderr.String())
		}
	}
}

// buildsPerKey reads the build log.
func buildsPerKey(t *testing.T, log string) map[string]int {
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		m[l]++
	}
	return m
}

// TestFleetOneBuildPerKey starts 8 processes with empty local caches
// together against one store: each key is built exactly once, and every
// process gets the right binaries.
func TestFleetOneBuildPerKey(t *testing.T) {
	const nodes, keys = 8, 3
	for name, srv := range stores(t) {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "builds")
			ns := startNodes(t, nodes, "DGEN_CACHE_REMOTE="+srv.URL, "NODE_KEYS="+strconv.Itoa(keys),
				"NODE_BUILD=300ms", "NODE_LOG="+log, "DGEN_CACHE_REMOTE_TIMEOUT=5s", "DGEN_CACHE_REMOTE_KEY=fleet test key")
			waitNodes(t, ns)
			got := buildsPerKey(t, log)
			for i := 0; i < keys; i++ {
				if n := got[strconv.Itoa(i)]; n != 1 {
					t.Errorf("key %d built %d times; want 1", i, n)
				}
			}
			for i, nd := range ns {
				if strings.Contains(nd.stderr.String(), "level=WARN") {
					t.Errorf("node %d warned: %s", i, nd.stderr.String())
				}
				t.Logf("node %d: %s", i, strings.TrimSpace(nd.stdout.String()))
			}
		})
	}
}

// TestFleetRedisKilled kills the Redis server while 4 processes run: every
// process finishes with the right binaries and warns exactly once.
func TestFleetRedisKilled(t *testing.T) {
	const nodes, keys = 4, 40
	srv := fleettest.StartRedis(t)
	log := filepath.Join(t.TempDir(), "builds")
	ns := startNodes(t, nodes, "DGEN_CACHE_REMOTE="+srv.URL, "NODE_KEYS="+strconv.Itoa(keys),
		"NODE_BUILD=40ms", "NODE_LOG="+log, "DGEN_CACHE_REMOTE_TIMEOUT=500ms", "DGEN_CACHE_REMOTE_UNSIGNED=insecure")
	deadline := time.Now().Add(20 * time.Second)
	// Let the nodes build a few keys, then kill the server.
	for len(buildsPerKey(t, log)) < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	srv.Kill()
	waitNodes(t, ns)
	for i, nd := range ns {
		if n := strings.Count(nd.stderr.String(), "level=WARN"); n != 1 {
			t.Errorf("node %d: %d warnings; want 1:\n%s", i, n, nd.stderr.String())
		}
		t.Logf("node %d: %s", i, strings.TrimSpace(nd.stdout.String()))
	}
	if got := buildsPerKey(t, log); len(got) != keys {
		t.Errorf("%d keys built; want %d", len(got), keys)
	}
}
