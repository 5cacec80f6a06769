module github.com/dgen-go/dgen

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/gofrs/flock v0.12.1 // indirect
	golang.org/x/sys v0.22.0 // indirect
)
