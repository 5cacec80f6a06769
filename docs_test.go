package dgen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// docPages are the pages that TestDocs checks, with the most lines each may
// have (0: no bound).
var docPages = []struct {
	path     string
	maxLines int
}{
	{"README.md", 250},
	{"docs/BENCHMARKS.md", 400},
	{"docs/ARCHITECTURE.md", 0},
	{"docs/CACHE.md", 0},
	{"docs/DECLARATIONS.md", 0},
	{"docs/FAULTS.md", 0},
	{"docs/OPERATIONS.md", 0},
	{"docs/OWN-MODULE.md", 0},
	{"docs/RUNTIME.md", 0},
	{"docs/TRACING.md", 0},
}

// TestDocs checks the README and the pages of docs/: each within its
// length; every relative link naming a file or directory of the checkout,
// and a heading of the page it links to where it names one; and every code
// block marked <!-- file: PATH --> the whole of that file, every one marked
// <!-- from: PATH --> a part of it, so that the code a page shows is code
// that compiles and that tests run.
func TestDocs(t *testing.T) {
	for _, p := range docPages {
		t.Run(p.path, func(t *testing.T) {
			text := readDoc(t, p.path)
			if n := strings.Count(text, "\n"); p.maxLines > 0 && n > p.maxLines {
				t.Errorf("%s has %d lines; at most %d", p.path, n, p.maxLines)
			}
			for _, err := range checkLinks(p.path, text) {
				t.Error(err)
			}
			for _, err := range checkBlocks(p.path, text) {
				t.Error(err)
			}
		})
	}
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// linkRE matches a Markdown link's target: [text](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkLinks returns an error for every relative link of page (its text)
// whose file, directory or heading does not exist. Links in code blocks and
// links with a scheme are not checked.
func checkLinks(page, text string) []error {
	var errs []error
	for _, target := range linkRE.FindAllStringSubmatch(stripCode(text), -1) {
		ref := target[1]
		if strings.Contains(ref, "://") || strings.HasPrefix(ref, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(ref, "#")
		dest := page
		if file != "" {
			dest = filepath.Join(filepath.Dir(page), file)
		}
		if _, err := os.Stat(dest); err != nil {
			errs = append(errs, fmt.Errorf("%s links to %s, which does not exist", page, ref))
			continue
		}
		if anchor == "" {
			continue
		}
		b, err := os.ReadFile(dest)
		if err != nil || !strings.HasSuffix(dest, ".md") {
			errs = append(errs, fmt.Errorf("%s links to %s: a heading of something other than a page", page, ref))
			continue
		}
		if !hasAnchor(string(b), anchor) {
			errs = append(errs, fmt.Errorf("%s links to %s: %s has no heading #%s", page, ref, dest, anchor))
		}
	}
	return errs
}

// stripCode removes the fenced code blocks and code spans of text.
func stripCode(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(regexp.MustCompile("`[^`]*`").ReplaceAllString(line, ""))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hasAnchor reports whether text has a heading whose anchor, as GitHub
// makes it, is anchor.
func hasAnchor(text, anchor string) bool {
	for _, line := range strings.Split(stripFences(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		if slug(strings.TrimLeft(line, "#")) == anchor {
			return true
		}
	}
	return false
}

// stripFences removes the fenced code blocks of text.
func stripFences(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		} else if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// slug is GitHub's anchor of a heading: lower case, spaces to hyphens, and
// every character but letters, digits, hyphens and underscores left out.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markRE matches the mark before a checked code block.
var markRE = regexp.MustCompile(`(?m)^<!-- (file|from): (\S+) -->\n` + "```" + `[a-z]*\n((?s:.*?))` + "```" + `\n`)

// checkBlocks returns an error for every marked code block of page that is
// not the file it names (file:) or a part of it (from:).
func checkBlocks(page, text string) []error {
	var errs []error
	for _, m := range markRE.FindAllStringSubmatch(text, -1) {
		kind, path, block := m[1], m[2], m[3]
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s shows %s: %v", page, path, err))
			continue
		}
		switch file := string(b); {
		case kind == "file" && block != file:
			errs = append(errs, fmt.Errorf("%s shows a block that is not %s as it is: copy the file into it again", page, path))
		case kind == "from" && !strings.Contains(file, block):
			errs = append(errs, fmt.Errorf("%s shows a block that is not part of %s: copy it from the file again", page, path))
		}
	}
	if n, marks := len(markRE.FindAllString(text, -1)), strings.Count(text, "<!-- file: ")+strings.Count(text, "<!-- from: "); n != marks {
		errs = append(errs, fmt.Errorf("%s has %d marks of checked blocks, of which %d mark a code block", page, marks, n))
	}
	return errs
}
