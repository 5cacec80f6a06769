package main

import "testing"

// TestRun runs the example on the default device (PoCL here) and checks
// every value it verifies.
func TestRun(t *testing.T) {
	res, err := run(t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if res["counter"] != uint32(64*1+64*6) {
		t.Errorf("counter = %v, want %d", res["counter"], 64*7)
	}
	for _, k := range []string{"bounds_error", "host_access_error", "steps", "seen", "scale"} {
		if _, ok := res[k]; !ok {
			t.Errorf("result has no %q", k)
		}
	}
}
