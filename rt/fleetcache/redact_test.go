package fleetcache

import (
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt/fleetcache/fleettest"
)

// TestFailureHidesPassword: a request that an HTTP store answers with an
// error status (here nginx's 405 for a PUT outside its WebDAV location) is
// reported, in the warning and the trace, with the URL's password hidden.
func TestFailureHidesPassword(t *testing.T) {
	srv := fleettest.StartNginx(t)
	const password = "hunter2"
	url := "http://dgen:" + password + "@" + srv.Addr + "/elsewhere"
	var warn, tr syncBuffer
	f := openFleet(t, url, func(c *Config) { c.Logger = warn.logger(); c.Trace = &tr })
	f.Publish(testKey(200), testBinary(200, 100))
	flush(f)
	if s := f.Stats(); s.Errors != 1 {
		t.Fatalf("stats %+v; want the publish's 1 error", s)
	}
	for name, out := range map[string]string{"warning": warn.String(), "trace": tr.String()} {
		if strings.Contains(out, password) {
			t.Errorf("the %s shows the password:\n%s", name, out)
		}
	}
	f.Close(time.Second)
}
