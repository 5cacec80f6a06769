module github.com/dgen-go/dgen

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/dave/jennifer v1.7.1
	github.com/gofrs/flock v0.12.1
	github.com/redis/go-redis/v9 v9.7.3
	golang.org/x/tools v0.38.0
)

require (
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	golang.org/x/mod v0.29.0 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/sys v0.37.0 // indirect
)
