package clsrc

import (
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

// Rewrite is the Rewrite function for an already parsed file.
func (f *File) Rewrite(globals []Global) (*Rewritten, error) {
	var errs ErrorList
	gindex := map[string]int{}
	names := make([]string, len(globals))
	isArray := make([]bool, len(globals))
	elem := make([]string, len(globals))
	for i, g := range globals {
		if !isCIdent(g.Name) {
			return nil, fmt.Errorf("device global name %q is not an OpenCL C identifier", g.Name)
		}
		if _, dup := gindex[g.Name]; dup {
			return nil, fmt.Errorf("device global %s given twice", g.Name)
		}
		base, dims, err := splitArray(g.Type)
		if err != nil || base == "" || strings.ContainsAny(base, "*;{}()") {
			return nil, fmt.Errorf("device global %s: bad OpenCL C type %q", g.Name, g.Type)
		}
		if len(dims) > 1 {
			return nil, fmt.Errorf("device global %s: only one-dimensional array types are supported, not %q", g.Name, g.Type)
		}
		gindex[g.Name] = i
		names[i] = g.Name
		isArray[i] = len(dims) == 1
		elem[i] = base
	}
	for _, fn := range f.Functions {
		if _, ok := gindex[fn.Name]; ok {
			errs = append(errs, &Error{Pos: fn.Pos, Msg: fmt.Sprintf("function %s has the name of a device global", fn.Name)})
		}
	}
	for _, m := range f.Macros {
		if _, ok := gindex[m.Name]; ok {
			errs = append(errs, &Error{Pos: m.Pos, Msg: fmt.Sprintf("macro %s has the name of a device global", m.Name)})
		}
	}
	s := &srcScanner{src: f.Src, li: f.li}
	for _, t := range s.scan(0, len(f.Src), false) {
		if t.Kind == Ident && strings.HasPrefix(t.Text, MangledPrefix) {
			errs = append(errs, &Error{Pos: t.Pos, Msg: fmt.Sprintf("identifier %s uses dgen's reserved prefix %s", t.Text, MangledPrefix)})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	// Nodes of the dependency graph: functions (by name) and macros.
	type node struct {
		direct []Use
		deps   []string // "f:name" or "m:name"
		needs  map[int]bool
	}
	nodes := map[string]*node{}
	var order []string // deterministic iteration
	add := func(key string) *node {
		if n, ok := nodes[key]; ok {
			return n
		}
		n := &node{needs: map[int]bool{}}
		nodes[key] = n
		order = append(order, key)
		return n
	}
	funcNames := map[string]bool{}
	for _, fn := range f.Functions {
		funcNames[fn.Name] = true
	}
	macroNames := map[string]bool{}
	for _, m := range f.Macros {
		macroNames[m.Name] = true
	}
	depOf := func(name string) string {
		switch {
		case macroNames[name]:
			return "m:" + name
		case funcNames[name]:
			return "f:" + name
		}
		return ""
	}
	var fnUses = map[*Function][]Use{}
	for _, fn := range f.Functions {
		n := add("f:" + fn.Name)
		if !fn.HasBody {
			continue
		}
		for _, u := range fn.identifiers() {
			if _, ok := gindex[u.Name]; ok {
				n.direct = append(n.direct, u)
				fnUses[fn] = append(fnUses[fn], u)
			} else if d := depOf(u.Name); d != "" {
				n.deps = append(n.deps, d)
			}
		}
	}
	macroUses := map[*Macro][]Use{}
	for _, m := range f.Macros {
		n := add("m:" + m.Name)
		for _, id := range m.idents() {
			if d := depOf(id); d != "" && d != "m:"+m.Name {
				n.deps = append(n.deps, d)
			}
		}
		us := m.Uses(names...)
		macroUses[m] = us
		n.direct = append(n.direct, us...)
	}
	for _, key := range order {
		n := nodes[key]
		for _, u := range n.direct {
			n.needs[gindex[u.Name]] = true
		}
	}
	// Fixpoint: needs only grow and are bounded, so this terminates even
	// with recursion.
	for changed := true; changed; {
		changed = false
		for _, key := range order {
			n := nodes[key]
			for _, d := range n.deps {
				for g := range nodes[d].needs {
					if !n.needs[g] {
						n.needs[g] = true
						changed = true
					}
				}
			}
		}
	}
	sorted := func(key string) []int {
		n := nodes[key]
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

	// Edits.
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	useText := func(name string) string {
		g := gindex[name]
		if isArray[g] {
			return Mangle(name)
		}
		return "(*" + Mangle(name) + ")"
	}
	argList := func(gs []int) string {
		parts := make([]string, len(gs))
		for i, g := range gs {
			parts[i] = Mangle(names[g])
		}
		return strings.Join(parts, ", ")
	}
	rewriteCalls := func(cs []Call) {
		for _, c := range cs {
			if !funcNames[c.Name] || macroNames[c.Name] {
				continue
			}
			gs := sorted("f:" + c.Name)
			if len(gs) == 0 {
				continue
			}
			sep := ", "
			if c.NoArgs {
				sep = ""
			}
			edits = append(edits, edit{c.RParen, c.RParen, sep + argList(gs)})
		}
	}
	for _, fn := range f.Functions {
		gs := sorted("f:" + fn.Name)
		if len(gs) > 0 {
			parts := make([]string, len(gs))
			for i, g := range gs {
				parts[i] = "__global " + elem[g] + "* " + Mangle(names[g])
			}
			params := strings.Join(parts, ", ")
			switch {
			case fn.VoidParam >= 0:
				edits = append(edits, edit{fn.VoidParam, fn.VoidParam + len("void"), params})
			case len(fn.Params) == 0:
				edits = append(edits, edit{fn.RParen, fn.RParen, params})
			default:
				edits = append(edits, edit{fn.RParen, fn.RParen, ", " + params})
			}
		}
		for _, u := range fnUses[fn] {
			edits = append(edits, edit{u.Pos.Offset, u.End, useText(u.Name)})
		}
		rewriteCalls(fn.Calls)
	}
	for _, m := range f.Macros {
		for _, u := range macroUses[m] {
			edits = append(edits, edit{u.Pos.Offset, u.End, useText(u.Name)})
		}
		rewriteCalls(m.Calls)
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if e.start < last {
			continue // cannot happen: edits are at distinct tokens
		}
		b.Write(f.Src[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(f.Src[last:])

	r := &Rewritten{Source: []byte(b.String()), Functions: map[string][]string{}}
	used := map[int]bool{}
	for _, k := range f.Kernels() {
		gs := sorted("f:" + k.Name)
		kg := KernelGlobals{Kernel: k.Name, NumParams: len(k.Params)}
		for _, g := range gs {
			kg.Globals = append(kg.Globals, names[g])
			used[g] = true
		}
		r.Kernels = append(r.Kernels, kg)
	}
	for g := range names {
		if used[g] {
			r.Globals = append(r.Globals, names[g])
		}
	}
	for _, key := range order {
		gs := sorted(key)
		if len(gs) == 0 {
			continue
		}
		var ns []string
		for _, g := range gs {
			ns = append(ns, names[g])
		}
		r.Functions[key[2:]] = ns
	}
	return r, nil
}

// Image assembles a device image: the prelude (such as the struct
// declarations of device global types), then a #line directive that
// restores the numbering of the user's file, then the rewritten source.
// Build logs therefore name fileName and the user's own line numbers.
// Without a prelude the source is returned unchanged.
func Image(prelude, fileName string, source []byte) []byte {
	if prelude == "" {
		return source
	}
	var b strings.Builder
	b.WriteString(prelude)
	if !strings.HasSuffix(prelude, "\n") {
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
