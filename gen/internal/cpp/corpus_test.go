package cpp

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir is the shared corpus of OpenCL C written by others, relative to
// this package.
const corpusDir = "../../../../shared/cl-corpus"

// corpusOptions reads OPTIONS.tsv: build options by file.
func corpusOptions(t testing.TB) map[string]string {
	opts := map[string]string{}
	f, err := os.Open(filepath.Join(corpusDir, "OPTIONS.tsv"))
	if err != nil {
		return opts
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		path, o, ok := strings.Cut(sc.Text(), "\t")
		if ok {
			opts[path] = o
		}
	}
	return opts
}

func corpusFiles(t testing.TB) []string {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("no corpus at %s (%v): it lives in the shared folder beside the module", corpusDir, err)
	}
	var files []string
	filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".cl") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func corpusConfig(t testing.TB, path string, opts map[string]string) *Config {
	rel, _ := filepath.Rel(corpusDir, path)
	o := strings.ReplaceAll(opts[filepath.ToSlash(rel)], "@DIR@", filepath.Dir(path))
	defs, dirs, err := ParseOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Defines: append(OpenCL(), defs...), IncludeDirs: dirs}
}

// TestCorpusAgainstGCC preprocesses every file of the corpus and compares
// the tokens with those of GCC's preprocessor given the same macros.
func TestCorpusAgainstGCC(t *testing.T) {
	files := corpusFiles(t)
	if _, err := exec.LookPath("cpp"); err != nil {
		t.Skip("no cpp on PATH")
	}
	opts := corpusOptions(t)
	total := 0
	defer func() { t.Logf("%d files, %d tokens compared", len(files), total) }()
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := corpusConfig(t, path, opts)
		r := Preprocess(cfg, path, src)
		if len(r.Errors) > 0 {
			t.Errorf("%s: %v", path, r.Errors)
			continue
		}
		args := []string{"-P", "-undef", "-nostdinc", "-std=c99"}
		for _, d := range cfg.Defines {
			if d.Undef {
				args = append(args, "-U"+d.Name)
			} else {
				args = append(args, "-D"+d.Name+"="+d.Value)
			}
		}
		for _, d := range cfg.IncludeDirs {
			args = append(args, "-I"+d)
		}
		out, err := exec.Command("cpp", append(args, path)...).Output()
		if err != nil {
			t.Errorf("%s: cpp: %v", path, err)
			continue
		}
		toks, _ := lex("gcc", string(out))
		var ours []Token
		for _, tok := range r.Tokens {
			if tok.Kind != Pragma {
				ours = append(ours, tok)
			}
		}
		var theirs []Token
		for i := 0; i < len(toks); i++ {
			if toks[i].BOL && toks[i].Text == "#" { // #pragma lines
				for i+1 < len(toks) && !toks[i+1].BOL {
					i++
				}
				continue
			}
			theirs = append(theirs, toks[i])
		}
		total += len(ours)
		for i := 0; i < len(ours) || i < len(theirs); i++ {
			if i >= len(ours) || i >= len(theirs) || ours[i].Text != theirs[i].Text {
				var o, g string
				if i < len(ours) {
					o = ours[i].Text + " at " + ours[i].Pos.String()
				}
				if i < len(theirs) {
					g = theirs[i].Text
				}
				t.Errorf("%s: token %d: ours %q, gcc %q", path, i, o, g)
				break
			}
		}
	}
}
