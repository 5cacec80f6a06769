//go:build unix

package diskcache

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRootChmod: a chmod 000 of the cache directory while the cache runs
// makes its lock files unreachable: the cache turns itself off at the next
// store with one warning, as it does for a read-only directory, and every
// lookup after just builds. It used to say nothing and fail every lookup
// and store for good, a persistent cache that silently caches nothing.
func TestRootChmod(t *testing.T) {
	if os.Geteuid() == 0 {
		runUnprivileged(t, "TestRootChmod") // root ignores permissions
		return
	}
	var warn bytes.Buffer
	c, dir := rootTestCache(t, &warn)
	if !storeAndGet(t, c, 1) {
		t.Fatal("no entry stored before the chmod")
	}
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	for i := range 3 {
		k := testKey(100 + i)
		built := false
		if _, _, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { built = true; return payload(k, 64), nil }); err != nil || !built {
			t.Fatalf("GetOrBuild after the chmod: %v, built %v", err, built)
		}
		c.Put(testKey(200+i), payload(testKey(200+i), 64))
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings after a chmod 000 of the cache directory, want 1:\n%s", n, warn.String())
	}
	if c.Enabled() {
		t.Errorf("the cache is still on, and fails every lookup")
	}
}

// runUnprivileged runs the test named test again in a process of its own
// as the user nobody (65534), for a test of permissions that root would
// ignore: from a copy of the test binary in a directory that nobody can
// read, with TMPDIR one that nobody can write. It skips where the process
// cannot be started so (no setuid permission).
func runUnprivileged(t *testing.T, test string) {
	t.Helper()
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	bin := filepath.Join(dir, "diskcache.test")
	for _, err := range []error{os.Chmod(filepath.Dir(dir), 0o755), os.Chmod(dir, 0o755), os.Mkdir(tmp, 0o777), os.Chmod(tmp, 0o777), copyFile(bin, os.Args[0])} {
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run", "^"+test+"$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "--- FAIL") {
		t.Skipf("cannot run %s as nobody: %v %s", test, err, out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Errorf("%s as nobody: %v\n%s", test, err, out)
	}
}

// copyFile copies the file src to dst, executable.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
