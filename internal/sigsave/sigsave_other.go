//go:build !unix || !cgo

package sigsave

// Without cgo, or where there are no POSIX signals, no C library can have
// installed handlers: there is nothing to save.
func save() {}

var restored int

func restore() {}
