// Command dgen-vet runs dgen's checks (package dgenvet) under go vet:
//
//	go build -o dgen-vet github.com/dgen-go/dgen/cmd/dgen-vet
//	go vet -vettool=$PWD/dgen-vet ./...
//
// It reports every diagnostic that dgen would, at its place, and generated
// code that go generate would change.
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/dgen-go/dgen/dgenvet"
)

func main() { unitchecker.Main(dgenvet.Analyzer) }
