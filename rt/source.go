package rt

import (
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/dgen-go/dgen/rt/internal/link"
)

// checkSources compares the files a program's image was made from, as
// embedded in the build, with the hashes dgen recorded when it read them.
// It returns nil, or an error wrapping ErrStale that names the first file
// that differs: its program then fails every use.
func checkSources(id string, srcs []link.Source) error {
	for _, s := range srcs {
		if xxhash.Sum64String(s.Embedded) != s.Hash {
			return fmt.Errorf("program %s: %w: %s changed after go generate read it; run go generate", id, ErrStale, s.Name)
		}
	}
	return nil
}
