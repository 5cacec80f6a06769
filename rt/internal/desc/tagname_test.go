package desc

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"
)

// TestTagNameWhileRegistering reads tag names while sites register, as a
// traced allocation may while a package initialized later registers its
// own sites: under -race it fails if TagName reads what Register writes.
// Every registered tag keeps its name.
func TestTagNameWhileRegistering(t *testing.T) {
	const n = 200
	vars := make([]int64, n)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			for tag := range uint32(n + 2) {
				_ = TagName(tag)
			}
		}
	}()
	sites := make([]*AllocSite, n)
	for i := range sites {
		name := fmt.Sprintf("tagname-test-%d", i)
		sites[i] = Register(&AllocSite{Var: Var{Addr: unsafe.Pointer(&vars[i]), Size: 4}, ID: "desc_test." + name, Name: name})
	}
	close(done)
	wg.Wait()
	for i, s := range sites {
		if got, want := TagName(s.Tag()), fmt.Sprintf("tagname-test-%d", i); got != want {
			t.Errorf("TagName(%d) = %q, want %q", s.Tag(), got, want)
		}
	}
}
