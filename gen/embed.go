package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
)

// The rules of //go:embed (cmd/go's resolveEmbed) that a program's source
// and the headers inside the package directory must follow, since the
// generated file embeds them: checked here, so that go build does not
// refuse the generated file.

// embeddable returns why the go command would not embed the file rel
// (slash-separated, relative to the package directory dir), or nil.
func embeddable(dir, rel string) error {
	for _, elem := range strings.Split(rel, "/") {
		if err := embedName(elem); err != nil {
			return err
		}
	}
	at := dir
	elems := strings.Split(rel, "/")
	for i, elem := range elems {
		at = filepath.Join(at, elem)
		fi, err := os.Lstat(at)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link, which go:embed does not follow; copy the file in, or move it here", path.Join(elems[:i+1]...))
		}
		if i == len(elems)-1 {
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file, which go:embed refuses", rel)
			}
			break
		}
		if _, err := os.Stat(filepath.Join(at, "go.mod")); err == nil {
			return fmt.Errorf("%s is in another module (%s/go.mod), whose files go:embed cannot reach; move the file into this module", rel, path.Join(elems[:i+1]...))
		}
	}
	return nil
}

// embedName returns why a file or directory name cannot be embedded by a
// //go:embed pattern that dgen writes: the names that module zips refuse
// (module.CheckFilePath), version control directories, and characters
// that a pattern would read as glob or separator.
func embedName(elem string) error {
	switch {
	case elem == "" || elem == "." || elem == "..":
		return fmt.Errorf("empty, . or .. path element in %q", elem)
	case elem == ".git" || elem == ".hg" || elem == ".svn" || elem == ".bzr":
		return fmt.Errorf("%s is a version control directory, whose files go:embed refuses", elem)
	case strings.HasSuffix(elem, "."):
		return fmt.Errorf("name %q ends in a dot, which go:embed refuses", elem)
	}
	for _, r := range elem {
		if !embedRune(r) {
			return fmt.Errorf("name %q has the character %q, which a //go:embed pattern cannot name; rename the file", elem, r)
		}
	}
	short, _, _ := strings.Cut(elem, ".")
	if reservedWindows[strings.ToLower(short)] {
		return fmt.Errorf("name %q is reserved on Windows, so go:embed refuses it", elem)
	}
	return nil
}

// embedRune reports whether r may appear in a file name that dgen writes
// into a //go:embed pattern: module.CheckFilePath's characters less the
// glob characters and the space, which would split the pattern.
func embedRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("!#$%&()+,-.=@^_{}~", r)
	}
	return unicode.IsLetter(r)
}

var reservedWindows = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true, "com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true, "lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true}

// checkEmbeds reports each file of p's image that the generated file would
// embed but the go command would not: the source at its directive, a
// header at its #include.
func (s *state) checkEmbeds(p *front) bool {
	arg, _ := p.dir.Arg("source")
	ok := true
	if err := embeddable(s.l.dir, p.source); err != nil {
		s.errorf(arg.ValuePos, "program %s: source %s cannot be embedded in the generated file: %v", p.name, p.source, unwrapNotExist(err))
		ok = false
	}
	for _, inc := range p.pp.Includes {
		rel, err := filepath.Rel(s.l.dir, inc.Path)
		if err != nil || !filepath.IsLocal(rel) || inc.Path == p.clPath {
			continue // outside the package: not embedded
		}
		if err := embeddable(s.l.dir, filepath.ToSlash(rel)); err != nil {
			s.diag(inc.Pos, fmt.Sprintf("#include %s: the header cannot be embedded in the generated file: %v", filepath.ToSlash(rel), unwrapNotExist(err)))
			ok = false
		}
	}
	return ok
}

func unwrapNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fs.ErrNotExist
	}
	return err
}
