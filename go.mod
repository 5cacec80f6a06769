module github.com/dgen-go/dgen

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/gofrs/flock v0.12.1
)

require golang.org/x/sys v0.22.0 // indirect
