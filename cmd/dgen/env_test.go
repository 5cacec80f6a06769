package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
)

// TestEnvCommand: dgen env prints every variable of rt.EnvVars, with its
// field and default, and the same table as JSON.
func TestEnvCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"env"}, &out, &errb); code != 0 {
		t.Fatalf("dgen env: status %d, stderr %q", code, errb.String())
	}
	vars := rt.EnvVars()
	for _, v := range vars {
		if !strings.Contains(out.String(), "\n"+v.Name+" (") {
			t.Errorf("dgen env does not print %s", v.Name)
		}
		if v.Field != "" && !strings.Contains(out.String(), "Config."+v.Field) {
			t.Errorf("dgen env does not name Config.%s", v.Field)
		}
	}
	for _, want := range []string{"DGEN_DEVICE (Config.Device; default", "DGEN_TUNE (deprecated: use DGEN_RETUNE", "POCL_CACHE_DIR (read by PoCL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dgen env does not say %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"env", "-json"}, &out, &errb); code != 0 {
		t.Fatalf("dgen env -json: status %d, stderr %q", code, errb.String())
	}
	var got []rt.EnvVar
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != len(vars) {
		t.Errorf("dgen env -json: %d variables, %v; want %d", len(got), err, len(vars))
	}
}
