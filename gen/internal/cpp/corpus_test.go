package cpp

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/dgen-go/dgen/internal/clcorpus"
)

func corpusConfig(t testing.TB, f *clcorpus.File) *Config {
	defs, dirs, err := ParseOptions(f.Options)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Defines: append(OpenCL(), defs...), IncludeDirs: dirs}
}

// TestCorpusAgainstGCC preprocesses every file of the corpus and compares
// the tokens with those of GCC's preprocessor given the same macros.
func TestCorpusAgainstGCC(t *testing.T) {
	files, err := clcorpus.Load()
	if errors.Is(err, clcorpus.ErrNoSourceTree) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("cpp"); err != nil {
		t.Skip("no cpp on PATH")
	}
	total := 0
	defer func() { t.Logf("%d files, %d tokens compared", len(files), total) }()
	for _, f := range files {
		path := f.Abs
		cfg := corpusConfig(t, f)
		r := Preprocess(cfg, path, []byte(f.Src))
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
