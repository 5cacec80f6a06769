package clsrc

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Global is a device global that the source refers to by Name.
type Global struct {
	// Name is the identifier the kernel source uses.
	Name string
	// Type is the global's OpenCL C type: a scalar or vector ("float",
	// "int4"), a struct ("struct Params"), a typedef name, or an array of
	// those ("float[16]").
	Type string
}

// MangledPrefix is the prefix of the hidden parameters that carry device
// globals: a global G is reached through "__dgen_g_G".
const MangledPrefix = "__dgen_g_"

// Mangle returns the name of the hidden parameter that carries the global.
func Mangle(name string) string { return MangledPrefix + name }

// KernelGlobals lists the hidden arguments of one kernel.
type KernelGlobals struct {
	// Kernel is the kernel's name.
	Kernel string
	// Globals are the names of the globals the kernel takes, in the order
	// of the hidden parameters that follow the user's parameters: the
	// runtime binds global Globals[i] as argument NumParams+i.
	Globals []string
	// NumParams is the number of the user's parameters.
	NumParams int
}

// Rewritten is the result of Rewrite.
type Rewritten struct {
	// Source is the rewritten source. Its lines are the original lines: the
	// rewriting inserts no newline, so build logs point at the user's lines
	// (only the columns on rewritten lines shift).
	Source []byte
	// Kernels lists every kernel, in source order, with its hidden globals.
	Kernels []KernelGlobals
	// Globals lists the globals that some kernel uses, directly or through
	// helpers and macros, in the order they were given: the program's
	// table of globals.
	Globals []string
	// Functions maps every function and function-like macro that needs
	// globals to them, in order; for review and tests.
	Functions map[string][]string
}

// Rewrite rewrites src for the given device globals. Every function
// (kernel or helper, definition or prototype) that uses a global, directly,
// through a helper it calls or through a macro it uses, transitively, gets
// one trailing parameter "__global T* __dgen_g_NAME" for each global it
// needs, in the order of globals; every call to such a function passes
// them on; every use of a global's name in a function body or a #define
// body becomes "(*__dgen_g_NAME)", so that "Counter += 1" and "Params.x"
// keep working. For an array-typed global ("float[16]") the parameter is a
// pointer to the element type and a use becomes "__dgen_g_NAME", so that
// indexing works; sizeof of such a global gives the pointer's size.
//
// Uses in comments, strings, after '.' or '->', and of a name shadowed by
// a parameter or a local declaration are left alone. A macro's body is
// rewritten in place; a function that uses the macro needs the globals its
// body names, so the hidden parameters are in scope where it expands.
// Recursion between helpers is not valid OpenCL C but does not stop the
// rewriting. Globals that no function uses change nothing.
//
// Errors: a source that does not parse, a global whose name is not an
// identifier or is given twice, a global name that is also a function or
// macro name, and source that already uses a mangled name.
func Rewrite(src []byte, globals []Global) (*Rewritten, error) {
	f, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return f.Rewrite(globals)
}

// RewriteMasked is Rewrite for a source whose conditional code was
// evaluated: masked is src with the tokens of #if branches not taken
// replaced by spaces, so that the rewriting reads what the compiler will,
// and the edits it finds in masked apply to src at the same offsets.
func RewriteMasked(src, masked []byte, globals []Global) (*Rewritten, error) {
	if len(src) != len(masked) {
		return nil, fmt.Errorf("masked source has %d bytes, not %d", len(masked), len(src))
	}
	f, err := Parse(masked)
	if err != nil {
		return nil, err
	}
	return f.rewrite(src, globals)
}

// Rewrite is the Rewrite function for an already parsed file.
func (f *File) Rewrite(globals []Global) (*Rewritten, error) { return f.rewrite(f.Src, globals) }

// rewrite rewrites out, which has f's offsets, for the globals.
func (f *File) rewrite(out []byte, globals []Global) (*Rewritten, error) {
	rw := &rewriter{f: f, out: out, gindex: map[string]int{}, nodes: map[string]*node{},
		funcNames: map[string]bool{}, macroNames: map[string]bool{},
		fnUses: map[*Function][]Use{}, macroUses: map[*Macro][]Use{}}
	if err := rw.setGlobals(globals); err != nil {
		return nil, err
	}
	if errs := rw.conflicts(); len(errs) > 0 {
		return nil, errs
	}
	rw.graph()
	rw.fixpoint()
	rw.edit()
	return rw.result(), nil
}

// node is a function or macro in the graph of who needs which globals.
type node struct {
	direct []Use
	deps   []string // "f:name" or "m:name"
	needs  map[int]bool
}

// edit replaces src[start:end] by text.
type edit struct {
	start, end int
	text       string
}

// rewriter is the state of one Rewrite.
type rewriter struct {
	f          *File
	out        []byte // the text the edits apply to
	gindex     map[string]int
	names      []string
	isArray    []bool
	elem       []string
	nodes      map[string]*node
	order      []string // node keys, for deterministic iteration
	funcNames  map[string]bool
	macroNames map[string]bool
	fnUses     map[*Function][]Use
	macroUses  map[*Macro][]Use
	edits      []edit
}

// setGlobals checks and records the globals.
func (rw *rewriter) setGlobals(globals []Global) error {
	rw.names = make([]string, len(globals))
	rw.isArray = make([]bool, len(globals))
	rw.elem = make([]string, len(globals))
	for i, g := range globals {
		if !isCIdent(g.Name) {
			return fmt.Errorf("device global name %q is not an OpenCL C identifier", g.Name)
		}
		if _, dup := rw.gindex[g.Name]; dup {
			return fmt.Errorf("device global %s given twice", g.Name)
		}
		base, dims, err := splitArray(g.Type)
		if err != nil || base == "" || strings.ContainsAny(base, "*;{}()") {
			return fmt.Errorf("device global %s: bad OpenCL C type %q", g.Name, g.Type)
		}
		if len(dims) > 1 {
			return fmt.Errorf("device global %s: only one-dimensional array types are supported, not %q", g.Name, g.Type)
		}
		rw.gindex[g.Name] = i
		rw.names[i] = g.Name
		rw.isArray[i] = len(dims) == 1
		rw.elem[i] = base
	}
	return nil
}

// conflicts reports functions and macros named like a global and uses of
// the mangled prefix.
func (rw *rewriter) conflicts() ErrorList {
	var errs ErrorList
	f := rw.f
	for _, fn := range f.Functions {
		if _, ok := rw.gindex[fn.Name]; ok {
			errs = append(errs, &Error{Pos: fn.Pos, Msg: fmt.Sprintf("function %s has the name of a device global", fn.Name)})
		}
	}
	for _, m := range f.Macros {
		if _, ok := rw.gindex[m.Name]; ok {
			errs = append(errs, &Error{Pos: m.Pos, Msg: fmt.Sprintf("macro %s has the name of a device global", m.Name)})
		}
	}
	if !bytes.Contains(f.Src, []byte(MangledPrefix)) {
		return errs
	}
	s := &srcScanner{src: f.Src, li: f.li}
	for _, t := range s.scan(0, len(f.Src), false) {
		if t.Kind == Ident && strings.HasPrefix(t.Text, MangledPrefix) {
			errs = append(errs, &Error{Pos: t.Pos, Msg: fmt.Sprintf("identifier %s uses dgen's reserved prefix %s", t.Text, MangledPrefix)})
		}
	}
	return errs
}

func (rw *rewriter) add(key string) *node {
	if n, ok := rw.nodes[key]; ok {
		return n
	}
	n := &node{needs: map[int]bool{}}
	rw.nodes[key] = n
	rw.order = append(rw.order, key)
	return n
}

func (rw *rewriter) depOf(name string) string {
	switch {
	case rw.macroNames[name]:
		return "m:" + name
	case rw.funcNames[name]:
		return "f:" + name
	}
	return ""
}

// graph builds the nodes: each function's and macro's direct uses of
// globals and the functions and macros it uses.
func (rw *rewriter) graph() {
	f := rw.f
	for _, fn := range f.Functions {
		rw.funcNames[fn.Name] = true
	}
	for _, m := range f.Macros {
		rw.macroNames[m.Name] = true
	}
	for _, fn := range f.Functions {
		n := rw.add("f:" + fn.Name)
		if !fn.HasBody {
			continue
		}
		for _, u := range fn.identifiers() {
			if _, ok := rw.gindex[u.Name]; ok {
				n.direct = append(n.direct, u)
				rw.fnUses[fn] = append(rw.fnUses[fn], u)
			} else if d := rw.depOf(u.Name); d != "" {
				n.deps = append(n.deps, d)
			}
		}
	}
	for _, m := range f.Macros {
		n := rw.add("m:" + m.Name)
		for _, id := range m.idents() {
			if d := rw.depOf(id); d != "" && d != "m:"+m.Name {
				n.deps = append(n.deps, d)
			}
		}
		us := m.Uses(rw.names...)
		rw.macroUses[m] = us
		n.direct = append(n.direct, us...)
	}
	for _, key := range rw.order {
		n := rw.nodes[key]
		for _, u := range n.direct {
			n.needs[rw.gindex[u.Name]] = true
		}
	}
}

// fixpoint propagates needs along dependencies. Needs only grow and are
// bounded, so this terminates even with recursion.
func (rw *rewriter) fixpoint() {
	for changed := true; changed; {
		changed = false
		for _, key := range rw.order {
			n := rw.nodes[key]
			for _, d := range n.deps {
				for g := range rw.nodes[d].needs {
					if !n.needs[g] {
						n.needs[g] = true
						changed = true
					}
				}
			}
		}
	}
}

// sorted returns the globals a node needs, in order.
func (rw *rewriter) sorted(key string) []int {
	n := rw.nodes[key]
	if n == nil {
		return nil
	}
	var gs []int
	for g := range n.needs {
		gs = append(gs, g)
	}
	sort.Ints(gs)
	return gs
}

func (rw *rewriter) useText(name string) string {
	g := rw.gindex[name]
	if rw.isArray[g] {
		return Mangle(name)
	}
	return "(*" + Mangle(name) + ")"
}

func (rw *rewriter) argList(gs []int) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = Mangle(rw.names[g])
	}
	return strings.Join(parts, ", ")
}

// rewriteCalls passes the globals that callees need.
func (rw *rewriter) rewriteCalls(cs []Call) {
	for _, c := range cs {
		if !rw.funcNames[c.Name] || rw.macroNames[c.Name] {
			continue
		}
		gs := rw.sorted("f:" + c.Name)
		if len(gs) == 0 {
			continue
		}
		sep := ", "
		if c.NoArgs {
			sep = ""
		}
		rw.edits = append(rw.edits, edit{c.RParen, c.RParen, sep + rw.argList(gs)})
	}
}

// hiddenParams adds the hidden parameters of a function.
func (rw *rewriter) hiddenParams(fn *Function) {
	gs := rw.sorted("f:" + fn.Name)
	if len(gs) == 0 {
		return
	}
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = "__global " + rw.elem[g] + "* " + Mangle(rw.names[g])
	}
	params := strings.Join(parts, ", ")
	switch {
	case fn.VoidParam >= 0:
		rw.edits = append(rw.edits, edit{fn.VoidParam, fn.VoidParam + len("void"), params})
	case len(fn.Params) == 0:
		rw.edits = append(rw.edits, edit{fn.RParen, fn.RParen, params})
	default:
		rw.edits = append(rw.edits, edit{fn.RParen, fn.RParen, ", " + params})
	}
}

// edit collects the edits of every function and macro.
func (rw *rewriter) edit() {
	for _, fn := range rw.f.Functions {
		rw.hiddenParams(fn)
		for _, u := range rw.fnUses[fn] {
			rw.edits = append(rw.edits, edit{u.Pos.Offset, u.End, rw.useText(u.Name)})
		}
		rw.rewriteCalls(fn.Calls)
	}
	for _, m := range rw.f.Macros {
		for _, u := range rw.macroUses[m] {
			rw.edits = append(rw.edits, edit{u.Pos.Offset, u.End, rw.useText(u.Name)})
		}
		rw.rewriteCalls(m.Calls)
	}
}

// result applies the edits and lists the kernels' and functions' globals.
func (rw *rewriter) result() *Rewritten {
	f := rw.f
	sort.SliceStable(rw.edits, func(i, j int) bool { return rw.edits[i].start < rw.edits[j].start })
	var b strings.Builder
	last := 0
	for _, e := range rw.edits {
		if e.start < last {
			continue // cannot happen: edits are at distinct tokens
		}
		b.Write(rw.out[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(rw.out[last:])
	r := &Rewritten{Source: []byte(b.String()), Functions: map[string][]string{}}
	used := map[int]bool{}
	for _, k := range f.Kernels() {
		kg := KernelGlobals{Kernel: k.Name, NumParams: len(k.Params)}
		for _, g := range rw.sorted("f:" + k.Name) {
			kg.Globals = append(kg.Globals, rw.names[g])
			used[g] = true
		}
		r.Kernels = append(r.Kernels, kg)
	}
	for g := range rw.names {
		if used[g] {
			r.Globals = append(r.Globals, rw.names[g])
		}
	}
	for _, key := range rw.order {
		var ns []string
		for _, g := range rw.sorted(key) {
			ns = append(ns, rw.names[g])
		}
		if len(ns) > 0 {
			r.Functions[key[2:]] = ns
		}
	}
	return r
}

// Image assembles a device image: the prelude (such as the struct
// declarations of device global types), then a #line directive that names
// the user's file and restores its numbering, then the rewritten source.
// Build logs therefore name fileName and the user's own line numbers, not
// the temporary file a driver compiles. Without a prelude and a file name
// the source is returned unchanged.
func Image(prelude, fileName string, source []byte) []byte {
	if prelude == "" && fileName == "" {
		return source
	}
	var b strings.Builder
	b.WriteString(prelude)
	if prelude != "" && !strings.HasSuffix(prelude, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("#line 1")
	if fileName != "" {
		b.WriteString(" " + strconv.Quote(fileName))
	}
	b.WriteByte('\n')
	b.Write(source)
	return []byte(b.String())
}
