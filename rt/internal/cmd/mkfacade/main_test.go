package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFresh checks that rt's facade is what mkfacade writes from the
// core as it is: a declaration of the core changed without go generate
// ./rt fails here (and in make test's check-generated).
func TestFresh(t *testing.T) {
	dir, err := rtDir()
	if err != nil {
		t.Skipf("no source of rt (a gpu-bundle): %v", err)
	}
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./rt", filepath.Join(dir, output))
	}
}
