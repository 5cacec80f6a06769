module github.com/dgen-go/dgen

go 1.24.0
