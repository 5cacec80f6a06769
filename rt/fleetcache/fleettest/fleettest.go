// Package fleettest starts real stores for tests of the fleet cache: a
// redis-server and an nginx WebDAV server on loopback ports in temporary
// directories, stopped when the test ends, and a TCP proxy that injects
// faults in front of either.
//
// A server whose program is missing makes the test fail when it runs as
// root in a package directory of the source tree (make test installs the
// programs then, see scripts/deps.sh) and skip, saying so, otherwise.
package fleettest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Server is a running store.
type Server struct {
	URL  string // redis://127.0.0.1:port or http://127.0.0.1:port/cache
	Addr string // host:port
	cmd  *exec.Cmd
	done chan struct{}
}

// Kill stops the server at once (SIGKILL) and waits for it to exit.
func (s *Server) Kill() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
}

func lookPath(t testing.TB, prog string) string {
	t.Helper()
	if p, err := exec.LookPath(prog); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"} {
		if p := filepath.Join(dir, prog); fileExists(p) {
			return p
		}
	}
	if os.Geteuid() == 0 && inSourceTree() {
		t.Fatalf("%s is not installed: run scripts/deps.sh (make test does) to install it", prog)
	}
	t.Skipf("%s is not installed (in a source tree, scripts/deps.sh installs it as root: apt-get install %s)", prog, debPackage[prog])
	return ""
}

// inSourceTree reports whether the test runs in a package directory of
// dgen's source tree, where scripts/deps.sh installs the servers (make test
// runs it first): go test runs a test binary in its package's directory. A
// test binary run elsewhere (the GPU bundle, even one unpacked inside a
// checkout) skips instead.
func inSourceTree() bool {
	dir, err := os.Getwd()
	if err != nil {
		return false
	}
	if tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go")); len(tests) == 0 {
		return false
	}
	for {
		if fileExists(filepath.Join(dir, "scripts", "deps.sh")) && fileExists(filepath.Join(dir, "go.mod")) {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

var debPackage = map[string]string{"redis-server": "redis-server", "nginx": "nginx-light"}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func start(t testing.TB, name string, cmd *exec.Cmd, addr string, logPath string) *Server {
	t.Helper()
	s := &Server{Addr: addr, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return s
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited at start: %s", name, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within 10s", name, addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StartRedis starts a redis-server without persistence on a loopback port.
func StartRedis(t testing.TB) *Server {
	t.Helper()
	prog := lookPath(t, "redis-server")
	dir := t.TempDir()
	port := FreePort(t)
	logPath := filepath.Join(dir, "redis.log")
	cmd := exec.Command(prog, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--logfile", logPath, "--daemonize", "no")
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := start(t, "redis-server", cmd, addr, logPath)
	s.URL = "redis://" + addr
	return s
}

const nginxConf = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	server {
		listen 127.0.0.1:%[2]d;
		root %[1]s/www;
		client_max_body_size 0;
		location /cache/ {
			dav_methods PUT DELETE;
			create_full_put_path on;
			dav_access user:rw group:r all:r;
		}
	}
}
`

// StartNginx starts nginx as a WebDAV store on a loopback port; its URL
// ends in /cache.
func StartNginx(t testing.TB) *Server {
	t.Helper()
	prog := lookPath(t, "nginx")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "www", "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(nginxConf, dir, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := start(t, "nginx", cmd, addr, filepath.Join(dir, "error.log"))
	s.URL = "http://" + addr + "/cache"
	return s
}
