//go:build unix

package diskcache

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestRootChmod: a chmod 000 of the cache directory while the cache runs
// makes its lock files unreachable: the cache turns itself off at the next
// store with one warning, as it does for a read-only directory, and every
// lookup after just builds. It used to say nothing and fail every lookup
// and store for good, a persistent cache that silently caches nothing.
func TestRootChmod(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores permissions")
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
