package annotations

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// col returns the 1-based byte column of pos in a directive starting at base.
func col(base, pos token.Pos) int {
	if !pos.IsValid() {
		return 0
	}
	return int(pos-base) + 1
}

func TestParseOK(t *testing.T) {
	tests := []struct {
		text string
		verb string
		args map[string]string // name -> value; flags map to ""
		cols map[string]int    // name -> column of the argument
	}{
		{`//dgen:program source=hotspot.cl`, "program",
			map[string]string{"source": "hotspot.cl"}, map[string]int{"source": 16}},
		{`//dgen:program source=k/hotspot.cl options="-cl-mad-enable -D N=3"`, "program",
			map[string]string{"source": "k/hotspot.cl", "options": "-cl-mad-enable -D N=3"},
			map[string]int{"source": 16, "options": 36}},
		{`//dgen:program options="" source=a.cl`, "program",
			map[string]string{"source": "a.cl", "options": ""}, map[string]int{"options": 16, "source": 27}},
		{`//dgen:program source=a.cl options="-D S=\"x y\"\t"`, "program",
			map[string]string{"source": "a.cl", "options": "-D S=\"x y\"\t"}, nil},
		{`//dgen:kernel program=Hotspot name=hotspot_step`, "kernel",
			map[string]string{"program": "Hotspot", "name": "hotspot_step"},
			map[string]int{"program": 15, "name": 31}},
		{`//dgen:kernel   program=P`, "kernel", map[string]string{"program": "P"}, map[string]int{"program": 17}},
		{`//dgen:global`, "global", map[string]string{}, nil},
		{`//dgen:global device_image_scope host_access=read`, "global",
			map[string]string{"device_image_scope": "", "host_access": "read"},
			map[string]int{"device_image_scope": 15, "host_access": 34}},
		{"//dgen:global\thost_access=none ", "global", map[string]string{"host_access": "none"}, nil},
		{`//dgen:alloc`, "alloc", map[string]string{}, nil},
		{`//dgen:specconst`, "specconst", map[string]string{}, nil},
	}
	const base = token.Pos(100)
	for _, tt := range tests {
		d, err := ParseText(tt.text, base)
		if err != nil {
			t.Errorf("%s: unexpected error %v", tt.text, err)
			continue
		}
		if d.Verb != tt.verb || d.Pos != base || col(base, d.VerbPos) != 8 {
			t.Errorf("%s: verb %q at %d, want %q at 8", tt.text, d.Verb, col(base, d.VerbPos), tt.verb)
		}
		if len(d.Args) != len(tt.args) {
			t.Errorf("%s: got %d args, want %d", tt.text, len(d.Args), len(tt.args))
		}
		for name, want := range tt.args {
			a, ok := d.Arg(name)
			if !ok || a.Value != want {
				t.Errorf("%s: arg %s = %q (present %v), want %q", tt.text, name, a.Value, ok, want)
			}
			if c, ok := tt.cols[name]; ok && col(base, a.Pos) != c {
				t.Errorf("%s: arg %s at column %d, want %d", tt.text, name, col(base, a.Pos), c)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		text string
		col  int    // column of the (first) error
		msg  string // substring of the first error
	}{
		{`//dgen:`, 8, "missing directive verb"},
		{`//dgen:kernal program=X`, 8, "unknown directive //dgen:kernal"},
		{`//dgen:Kernel program=X`, 8, "unknown directive"},
		{`//dgen:kernel`, 8, "requires argument program="},
		{`//dgen:kernel name=k`, 8, "requires argument program="},
		{`//dgen:kernel program=X program=Y`, 25, `duplicate argument "program"`},
		{`//dgen:kernel program=X nmae=k`, 25, `unknown argument "nmae"`},
		{`//dgen:kernel program=1X`, 23, "must be a Go identifier"},
		{`//dgen:kernel program=X name=kernel`, 30, "OpenCL C identifier"},
		{`//dgen:kernel program=X name=a-b`, 30, "OpenCL C identifier"},
		{`//dgen:kernel program`, 15, "requires a value"},
		{`//dgen:kernel program=`, 23, "missing value"},
		{`//dgen:kernel program= X`, 23, "missing value"},
		{`//dgen:global host_access=maybe`, 27, `bad value "maybe" for host_access`},
		{`//dgen:global host_access=READ`, 27, "bad value"},
		{`//dgen:global device_image_scope=true`, 15, "is a flag"},
		{`//dgen:global device_image_scope device_image_scope`, 34, "duplicate argument"},
		{`//dgen:alloc tag=x`, 14, `unknown argument "tag"`},
		{`//dgen:specconst x`, 18, `unknown argument "x"`},
		{`//dgen:program source=a.cl options="-O2`, 36, "unterminated quoted value"},
		{`//dgen:program source=a.cl options="\q"`, 36, "malformed quoted value"},
		{`//dgen:program source=a.cl options="a"b`, 39, "unexpected text after quoted value"},
		{`//dgen:program source=a.cl options=a"b"`, 37, "unexpected quote"},
		{`//dgen:program source=a.cl options"x"`, 35, "missing '='"},
		{`//dgen:program source=a.cl ="x"`, 28, "malformed argument"},
		{`//dgen:program source=/abs/a.cl`, 23, "relative"},
		{`//dgen:program source=./a.cl`, 23, "not clean"},
		{`//dgen:program source=""`, 23, "must not be empty"},
		{`//dgen:program source=a.cl 9x=1`, 28, "malformed argument name"},
		{`//dgen:global // a comment`, 15, "malformed argument name"},
		{"//dgen:global\nhost_access=read", 1, "single line"},
		{`// dgen:global`, 1, "not a //dgen: directive"},
	}
	const base = token.Pos(1)
	for _, tt := range tests {
		_, err := ParseText(tt.text, base)
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Errorf("%s: got %v, want error containing %q", tt.text, err, tt.msg)
			continue
		}
		e := list[0]
		if c := col(base, e.Pos); c != tt.col || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%s: got %d: %s; want %d: ...%s...", tt.text, c, e.Msg, tt.col, tt.msg)
		}
	}
}

func TestParseReportsAllErrors(t *testing.T) {
	_, err := ParseText(`//dgen:global host_access=maybe bogus device_image_scope=1`, 1)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("got %v, want 3 errors", err)
	}
	var target *Error
	if !errors.As(err, &target) || target != list[0] {
		t.Errorf("errors.As does not find the first *Error")
	}
}

func TestTyped(t *testing.T) {
	d, err := ParseText(`//dgen:global host_access=write`, 1)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := d.Global()
	if !ok || g.DeviceImageScope || g.HostAccess != HostAccessWrite || col(1, g.HostAccessPos) != 15 {
		t.Errorf("Global() = %+v, %v", g, ok)
	}
	if _, ok := d.Kernel(); ok {
		t.Errorf("Kernel() on a global directive succeeded")
	}
	d, _ = ParseText(`//dgen:global device_image_scope`, 1)
	if g, _ := d.Global(); !g.DeviceImageScope || g.HostAccess != HostAccessReadWrite || g.HostAccessPos.IsValid() {
		t.Errorf("Global() defaults = %+v", g)
	}
	d, _ = ParseText(`//dgen:kernel program=P`, 1)
	if k, ok := d.Kernel(); !ok || k.Program.Value != "P" || k.Name.Pos.IsValid() {
		t.Errorf("Kernel() = %+v", k)
	}
	d, _ = ParseText(`//dgen:program source=x.cl options="-w"`, 1)
	if p, ok := d.Program(); !ok || p.Source.Value != "x.cl" || p.Options.Value != "-w" || !p.Options.Quoted {
		t.Errorf("Program() = %+v", p)
	}
}

func TestNotDirectives(t *testing.T) {
	for _, text := range []string{"//dgenerate", "// dgen:kernel program=X", "//go:generate dgen", "/*dgen:global*/", "//  dgen :global", "// Package dgen: x"} {
		if IsDirective(text) {
			t.Errorf("IsDirective(%q) = true", text)
		}
		d, ok, err := ParseComment(&ast.Comment{Slash: 1, Text: text})
		if ok || d != nil || err != nil {
			t.Errorf("ParseComment(%q) = %v, %v, %v", text, d, ok, err)
		}
	}
	near := []struct {
		text, fix string // fix is "" for no near miss
	}{
		{"// dgen:kernel program=X", "//dgen:kernel program=X"},
		{"//  dgen :global", "//dgen:global"},
		{"//\tdgen:alloc", "//dgen:alloc"},
		{"//Dgen:global", "//dgen:global"},
		{"//DGEN : specconst", "//dgen:specconst"},
		{"/*dgen:global*/", "//dgen:global"},
		{"/* dgen:kernel program=P */", "//dgen:kernel program=P"},
		{"/* dgen:global\nmore */", "//dgen:global"},
		{"//dgenerate", ""},
		{"//dgen:global", ""},
		{"// dgenerate: x", ""},
		{"// dgen is the generator", ""},
		{"/* dgen */", ""},
		{"//go:generate dgen", ""},
	}
	for _, c := range near {
		fix, ok := Fix(c.text)
		if fix != c.fix || ok != (c.fix != "") || NearMiss(c.text) != ok {
			t.Errorf("Fix(%q) = %q, %v, want %q", c.text, fix, ok, c.fix)
		}
	}
}

const src = `package p

// Hotspot is the program.
//
//dgen:program source=hotspot.cl options="-cl-mad-enable"
var Hotspot rt.Program

// A comment without directives.
//dgen:kernel program=Hotspot
//dgen:kernel program=Hotspot
type Step struct{ A int32 }

//dgen:global host_access=sometimes
var G rt.DeviceGlobal[float32]

//dgen:kernel program=Hotspot
type NotStruct int

//dgen:alloc
const C = 1
`

func TestCommentGroupsInFile(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, decl := range f.Decls {
		gd := decl.(*ast.GenDecl)
		ds, err := ParseCommentGroup(gd.Doc)
		var list ErrorList
		errors.As(err, &list)
		for _, e := range list {
			got = append(got, fset.Position(e.Pos).String()+": "+e.Msg)
		}
		for _, d := range ds {
			if err := CheckDeclOf(d, gd, gd.Specs[0]); err != nil {
				got = append(got, fset.Position(err.(*Error).Pos).String()+": "+err.Error())
			} else {
				got = append(got, fset.Position(d.Pos).String()+": ok "+d.Verb)
			}
		}
	}
	want := []string{
		"p.go:5:1: ok program",
		"p.go:10:1: duplicate //dgen:kernel directive",
		"p.go:9:1: ok kernel",
		`p.go:13:27: bad value "sometimes" for host_access: want one of read, write, read_write, none`,
		"p.go:13:1: ok global",
		"p.go:16:1: //dgen:kernel applies to a package-level struct type (struct), not to a non-struct type (NotStruct int)",
		"p.go:19:1: //dgen:alloc applies to a package-level variable (rt.AllocSite[T]), not to a constant (C)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Doc text must not contain the directives (go/ast strips them).
	if txt := f.Decls[0].(*ast.GenDecl).Doc.Text(); strings.Contains(txt, "dgen:") {
		t.Errorf("Doc.Text() kept the directive: %q", txt)
	}
}

func TestReference(t *testing.T) {
	ref := Reference()
	for _, s := range Markers() {
		if !strings.Contains(ref, "## "+Prefix+s.Verb) {
			t.Errorf("reference lacks %s", s.Verb)
		}
		for _, a := range s.Args {
			if !strings.Contains(ref, "`"+a.Name+"`") {
				t.Errorf("reference lacks %s %s", s.Verb, a.Name)
			}
		}
	}
	for _, want := range []string{
		"//dgen:program source=FILE [options=\"...\"]",
		"//dgen:kernel program=NAME [name=NAME]",
		"//dgen:global [device_image_scope] [host_access=read|write|read_write|none]",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("reference lacks %q:\n%s", want, ref)
		}
	}
}

func TestSpecsIsACopy(t *testing.T) {
	s := Markers()
	s[0].Verb = "changed"
	s[2].Args[1].Values[0] = "changed"
	if _, ok := Lookup("program"); !ok {
		t.Error("modifying Markers() changed the table")
	}
	if d, err := ParseText("//dgen:global host_access=read", 1); err != nil || d == nil {
		t.Errorf("modifying Markers() changed the table: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`//dgen:program source=hotspot.cl options="-cl-mad-enable"`,
		`//dgen:kernel program=Hotspot name=hotspot_step`,
		`//dgen:global device_image_scope host_access=read`,
		`//dgen:alloc`, `//dgen:specconst`, `//dgen:`, `//dgen:global host_access=`,
		`//dgen:program source=a.cl options="\"\\`, `//dgen:program options="a"b"c" ="`,
		"//dgen:global\x00\xff", `// dgen:kernel`, `//dgenerate`,
		`/*dgen:global*/`, `//DGEN :x`, "/* dgen:\n*/", `/*dgen`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if fix, ok := Fix(text); ok && (!IsDirective(fix) || IsDirective(text) || strings.Contains(fix, "\n")) {
			t.Fatalf("Fix(%q) = %q", text, fix)
		}
		const base = token.Pos(1000)
		end := base + token.Pos(len(text))
		inside := func(p token.Pos) bool { return p == token.NoPos || base <= p && p <= end }
		d, ok, err := ParseComment(&ast.Comment{Slash: base, Text: text})
		if !ok {
			if d != nil || err != nil {
				t.Fatalf("non-directive returned %v, %v", d, err)
			}
			return
		}
		if d == nil && err == nil {
			t.Fatalf("directive with neither result nor error")
		}
		var list ErrorList
		if err != nil && (!errors.As(err, &list) || len(list) == 0) {
			t.Fatalf("error %T is not a non-empty ErrorList", err)
		}
		for _, e := range list {
			if !inside(e.Pos) || !e.Pos.IsValid() {
				t.Fatalf("error position %d outside [%d,%d]: %s", e.Pos, base, end, e.Msg)
			}
		}
		if d != nil {
			if !inside(d.Pos) || !inside(d.VerbPos) || d.End != end {
				t.Fatalf("directive positions outside input")
			}
			for _, a := range d.Args {
				if !inside(a.Pos) || !inside(a.ValuePos) || !a.Pos.IsValid() {
					t.Fatalf("argument %s position outside input", a.Name)
				}
			}
		}
	})
}
