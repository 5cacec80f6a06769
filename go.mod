module github.com/dgen-go/dgen

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/dave/jennifer v1.7.1
	github.com/gofrs/flock v0.12.1
	github.com/redis/go-redis/v9 v9.7.3
	golang.org/x/tools v0.38.0
)

require (
	github.com/chzyer/readline v1.5.1 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20250417193237-f615e6bd150b // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	golang.org/x/mod v0.29.0 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
