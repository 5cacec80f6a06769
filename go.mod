module github.com/dgen-go/dgen

go 1.24.0

require github.com/cespare/xxhash/v2 v2.3.0
