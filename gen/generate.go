package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// Generate loads, checks and generates the package in dir. It returns the
// generated files, or Diagnostics (or another error) and no files.
func Generate(dir string) ([]File, error) {
	l, err := load(dir)
	if err != nil {
		return nil, err
	}
	return generate(l)
}

// generate checks and generates a loaded package. A panic, a bug of
// dgen's, is returned as an error: go generate, go vet and the editor get
// a message to report, not a crash.
func generate(l *loaded) (files []File, err error) {
	defer func() {
		if r := recover(); r != nil {
			files, err = nil, fmt.Errorf("dgen: internal error, please report it with the package that caused it: %v\n%s", r, debug.Stack())
		}
	}()
	s := newState(l)
	s.typeErrors()
	typeErrs := len(s.diags)
	m := s.checkShapes(s.collect())
	d := s.checkDecls(m)
	fr := s.checkPrograms(d)
	bs := s.checkKernels(d, fr)
	s.checkHostWrites(d)
	s.checkSpecUses(d, bs) // speclimits.go
	if len(s.diags) > 0 {
		s.dropTypeErrors(typeErrs)
		s.sortDiags()
		return nil, s.diags
	}
	return s.emit(d, fr, bs)
}

// typeErrors reports the package's type errors that the missing generated
// code does not explain, at their places.
func (s *state) typeErrors() {
	for _, e := range s.l.typeErrs {
		s.diag(e.pos, e.msg)
	}
}

// dropTypeErrors drops the first n diagnostics, the type errors, where a
// check of dgen's reports at the same place: "X redeclared in this block"
// beside "X is declared twice in the package (first at …)".
func (s *state) dropTypeErrors(n int) {
	at := map[token.Position]bool{}
	for _, d := range s.diags[n:] {
		at[d.Pos] = true
	}
	kept := s.diags[:0]
	for i, d := range s.diags {
		if i >= n || !at[d.Pos] {
			kept = append(kept, d)
		}
	}
	s.diags = kept
}

// parsePos reads a "file:line:col" or "file:line" position.
func parsePos(pos string) token.Position {
	var p token.Position
	rest := pos
	var nums []int
	for range 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		rest = rest[:i]
	}
	p.Filename = rest
	if len(nums) > 0 {
		p.Line = nums[0]
	}
	if len(nums) > 1 {
		p.Column = nums[1]
	}
	return p
}

// rename is os.Rename; tests replace it to inject failures.
var rename = os.Rename

// Write makes the generated files of dir be files, as a whole: every file
// is written to a temporary name first, then the old files are moved
// aside, the new ones renamed into place and generated files of earlier
// runs that files does not hold removed. On any failure every step taken
// is undone, so that dir holds either the old set or the new one.
func Write(dir string, files []File) error {
	t := &txn{dir: dir}
	if err := t.stage(files); err != nil {
		t.rollback()
		return err
	}
	if err := t.commit(); err != nil {
		t.rollback()
		return err
	}
	t.finish()
	return nil
}

var errIsDir = errors.New("a directory has the name of a generated file")

// txn is one Write: the temporary files written, and the renames done so
// far, to undo.
type txn struct {
	dir    string
	staged []staged
	stale  []string // generated files of earlier runs to remove
	done   []move   // renames done, in order
}

type staged struct{ tmp, name string }

type move struct{ from, to string }

// stage writes every file to a temporary name and finds the stale files.
func (t *txn) stage(files []File) error {
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Name] = true
		tmp, err := createTemp(t.dir)
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Name, err)
		}
		t.staged = append(t.staged, staged{tmp: tmp.Name(), name: f.Name})
		_, err = tmp.Write(f.Content)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Name, err)
		}
	}
	ents, err := os.ReadDir(t.dir)
	if err != nil {
		return fmt.Errorf("clean %s: %w", t.dir, err)
	}
	for _, e := range ents {
		if isGenerated(e.Name()) && !keep[e.Name()] {
			t.stale = append(t.stale, e.Name())
		}
	}
	return nil
}

// commit moves the old files aside and the new ones into place.
func (t *txn) commit() error {
	aside := func(name string) error {
		path := filepath.Join(t.dir, name)
		fi, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err == nil && fi.IsDir():
			return fmt.Errorf("write %s: %w", name, errIsDir)
		}
		bak := filepath.Join(t.dir, ".dgen-old-"+name)
		if err := rename(path, bak); err != nil {
			return fmt.Errorf("write %s: move the old file aside: %w", name, err)
		}
		t.done = append(t.done, move{path, bak})
		return nil
	}
	for _, name := range t.stale {
		if err := aside(name); err != nil {
			return err
		}
	}
	for _, st := range t.staged {
		if err := aside(st.name); err != nil {
			return err
		}
		path := filepath.Join(t.dir, st.name)
		if err := rename(st.tmp, path); err != nil {
			return fmt.Errorf("write %s: %w", st.name, err)
		}
		t.done = append(t.done, move{st.tmp, path})
	}
	return nil
}

// rollback undoes the renames, last first, and removes the temporary
// files.
func (t *txn) rollback() {
	for i := len(t.done) - 1; i >= 0; i-- {
		os.Rename(t.done[i].to, t.done[i].from)
	}
	for _, st := range t.staged {
		os.Remove(st.tmp)
	}
}

// finish removes the old files moved aside.
func (t *txn) finish() {
	for _, m := range t.done {
		if strings.HasPrefix(filepath.Base(m.to), ".dgen-old-") {
			os.Remove(m.to)
		}
	}
}

// Diff compares files with the generated files in dir and returns what
// Write would change, one line a file ("zz_generated.dgen.go: out of
// date", "...: would be created", "...: would be removed"), sorted; none
// when dir is up to date.
func Diff(dir string, files []File) ([]string, error) {
	return diff(dir, files, func(string) bool { return true })
}

// diff is Diff over the generated files for which owned holds.
func diff(dir string, files []File, owned func(name string) bool) ([]string, error) {
	var changes []string
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Name] = true
		if !owned(f.Name) {
			continue
		}
		old, err := os.ReadFile(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, f.Name+": would be created")
		case err != nil:
			return nil, fmt.Errorf("compare %s: %w", f.Name, err)
		case !bytes.Equal(old, f.Content):
			changes = append(changes, f.Name+": out of date")
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", dir, err)
	}
	for _, e := range ents {
		if isGenerated(e.Name()) && !keep[e.Name()] && owned(e.Name()) {
			changes = append(changes, e.Name()+": would be removed")
		}
	}
	sort.Strings(changes)
	return changes, nil
}
