package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// This file is the rewrite of NVIDIA's OpenCL program binary (PTX) into
// PTX that CUDA's driver API loads: a pure function of the text, with no
// cgo, so that it is tested on machines without NVIDIA software.
//
// What NVIDIA's OpenCL compiler emits, and what CUDA needs instead:
//
//   - `.entry` kernels are not `.visible`: cuModuleGetFunction finds only
//     visible ones, so every `.entry` becomes `.visible .entry`;
//   - `.target sm_NN, texmode_independent`: the mode is dropped, and the
//     images and samplers, which that mode keeps apart, are rewritten for
//     CUDA's unified mode (see ptximage.go);
//   - kernel parameters carry `.ptr .global|.shared|.const|.local
//     [.align N]` attributes: CUDA refuses a module in which a parameter
//     is `.ptr .shared` (CUDA_ERROR_INVALID_IMAGE with an empty log), so
//     the attributes move into a comment after the parameter, where Rewrite
//     reads them again (the rewrite is idempotent: rewritten PTX is its own
//     cache entry and describes itself);
//   - work-item builtins read driver environment registers: %envreg0-2
//     (group-id offsets) and %envreg3-5 (global-offset remainders) are 0,
//     since dgen launches have no global offset; %envreg6-8 (the number of
//     groups) are %nctaid.x/y/z; %envreg9 (get_work_dim) becomes a hidden
//     .u32 parameter after the kernel's own, which the backend sets at
//     every launch. Any other environment register is refused;
//   - a `__constant` pointer parameter (`.ptr .const`) points into the
//     const window, where NVIDIA's OpenCL copies the buffer, and the kernel
//     reads it with ld.const; CUDA passes the buffer's global address, which
//     ld.const reads as an offset in the constant bank (zeros, no error).
//     In a module with such a parameter the const state space becomes
//     global: its .const variables and every ld.const, cvta(.to).const and
//     isspacep.const, since one pointer may hold either kind of address.

// Param describes a kernel parameter of a rewritten module.
type Param struct {
	// Size and Align are the parameter's size and alignment in bytes.
	Size, Align int
	// Local reports a __local pointer parameter: its value is an address
	// in the shared window, and LocalAlign is the alignment of what it
	// points to.
	Local      bool
	LocalAlign int
	// Object is what an image or sampler parameter holds: a texture or
	// surface object, or a sampler (which the kernel never reads: its
	// state is in the texture objects of Entry.Hidden).
	Object Object
}

// Entry describes a kernel of a rewritten module.
type Entry struct {
	Name string
	// Params are the kernel's OpenCL parameters, in order; the hidden
	// work-dimension parameter is not among them.
	Params []Param
	// Hidden are the parameters the rewrite adds after Params: the
	// texture objects and the channel codes that the kernel's image
	// instructions read in CUDA's unified mode.
	Hidden []Hidden
	// WorkDim reports that the kernel reads get_work_dim(): it takes the
	// launch's dimension count as a hidden .u32 parameter after Params.
	WorkDim bool
}

// Module is PTX rewritten for CUDA's driver API, with its kernels.
type Module struct {
	PTX     []byte
	Entries []Entry
	// Refused are the kernels that the rewrite left out, each with why:
	// the module serves its other kernels.
	Refused []*UnsupportedError
}

// refusal returns why the kernel called name was left out, or nil.
func (m *Module) refusal(name string) *UnsupportedError {
	for _, e := range m.Refused {
		if e.Kernel == name {
			return e
		}
	}
	return nil
}

// Entry returns the entry called name.
func (m *Module) Entry(name string) (*Entry, bool) {
	for i := range m.Entries {
		if m.Entries[i].Name == name {
			return &m.Entries[i], true
		}
	}
	return nil, false
}

// UnsupportedError is why the rewrite refuses a kernel: it names the
// kernel and the construct. It wraps errors.ErrUnsupported and
// driver.ErrBuildFailed, so that rt reports and caches it as a build
// error of that kernel.
type UnsupportedError struct {
	Kernel    string // the kernel, or the function, that uses the construct
	Construct string // what it uses, for example "an image parameter (.texref)"
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("kernel %s uses %s, which dgen's CUDA backend does not run; DGEN_BACKEND=opencl runs it", e.Kernel, e.Construct)
}

// Unwrap returns errors.ErrUnsupported and driver.ErrBuildFailed.
func (e *UnsupportedError) Unwrap() []error {
	return []error{errors.ErrUnsupported, driver.ErrBuildFailed}
}

// workDimSuffix names the hidden work-dimension parameter of a kernel.
const workDimSuffix = "_dgen_workdim"

var (
	envregRe  = regexp.MustCompile(`%envreg(\d+)`)
	movEnvRe  = regexp.MustCompile(`^(\s*)mov\.b32\s+(%\w+),\s*%envreg9;(.*)$`)
	paramRe   = regexp.MustCompile(`^\s*\.param\s+(.*?)\s*(,?)\s*(?://(.*))?$`)
	ptrAttrRe = regexp.MustCompile(`\.ptr\s+\.(global|shared|const|local)(?:\s+\.align\s+(\d+))?`)
	opaqueRe  = regexp.MustCompile(`\.(texref|samplerref|surfref)\b`)
	scalarRe  = regexp.MustCompile(`^\.([usbf])(8|16|32|64)$`)
	arrayRe   = regexp.MustCompile(`^(?:\.align\s+(\d+)\s+)?\.b8\s+([\w$]+)\[(\d+)\]$`)
	constDecl = regexp.MustCompile(`^(\s*(?:\.(?:visible|weak|extern)\s+)?)\.const\b`)
	constUse  = regexp.MustCompile(`\b(ld|cvta|cvta\.to|isspacep)\.const\b`)
)

// Rewrite rewrites NVIDIA OpenCL's PTX for CUDA's driver API. It is a pure
// function of its input, and idempotent: rewriting its output gives the
// same module. A kernel that uses something CUDA does not run (an unknown
// environment register, an image instruction it cannot map) is left out
// of the PTX and listed in Module.Refused; the module serves the others.
func Rewrite(ptx []byte) (*Module, error) {
	ptx = bytes.TrimRight(ptx, "\x00")
	if !bytes.Contains(ptx, []byte(".version")) || !bytes.Contains(ptx, []byte(".target")) {
		return nil, fmt.Errorf("rewrite PTX: %w: no .version or .target: not PTX", driver.ErrInvalidBinary)
	}
	lines := strings.Split(string(ptx), "\n")
	r := rewriter{m: &Module{}, samplers: map[string]samplerConst{}, badFuncs: map[string]*UnsupportedError{}}
	r.globals(lines)
	out := make([]string, 0, len(lines)+8)
	for i := 0; i < len(lines); i++ {
		var err error
		if out, i, err = r.line(out, lines, i); err != nil {
			return nil, err
		}
	}
	if r.constParam {
		constToGlobal(out)
	}
	r.m.PTX = []byte(strings.Join(r.addHidden(out), "\n"))
	return r.m, nil
}

// rewriter holds the state of one Rewrite.
type rewriter struct {
	m       *Module
	fn      string   // the function whose body is being read
	entry   *Entry   // its entry, nil in a .func
	start   int      // where the function starts in the output
	skip    bool     // the function is refused: its lines are dropped
	opaque  []opaque // module-scope .texref/.surfref variables
	depth   int      // nesting of braces: inside a function body when > 0
	headers []header // where each entry's parameters are in the output
	// objects are the image and sampler parameters of the entry, by name.
	objects map[string]int
	// samplers are the module-scope sampler constants, by name.
	samplers map[string]samplerConst
	// badFuncs are the functions refused, by name: kernels that call one
	// are refused too.
	badFuncs map[string]*UnsupportedError
	// constParam reports an entry parameter that is a __constant pointer
	// (.ptr .const): the module's const space becomes global.
	constParam bool
}

// opaque is a module-scope image or surface variable.
type opaque struct {
	what string         // "image tex (.texref)"
	re   *regexp.Regexp // its name as a word
}

// header records where an entry's parameter list lies in the output: the
// index of its header line and of its last parameter line (-1 if none),
// with that parameter's declaration and comment.
type header struct {
	at, last      int
	decl, comment string
}

// wordRe returns a regexp that matches name as a word of PTX.
func wordRe(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[^\w$])` + regexp.QuoteMeta(name) + `($|[^\w$])`)
}

// globals collects the module-scope sampler constants, which the image
// rewrite bakes into texture objects, and the module-scope images and
// surfaces, which refuse the kernels that use them.
func (r *rewriter) globals(lines []string) {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, ".global") && !strings.HasPrefix(t, ".const") {
			continue
		}
		m := opaqueRe.FindStringSubmatch(t)
		if m == nil {
			continue
		}
		decl, init, _ := strings.Cut(t, "=")
		f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(decl), ";"))
		name := f[len(f)-1]
		if m[1] == "samplerref" {
			r.samplers[name] = parseSampler(name, init)
			continue
		}
		r.opaque = append(r.opaque, opaque{what: fmt.Sprintf("%s %s (.%s)", opaqueKind[m[1]], name, m[1]), re: wordRe(name)})
	}
}

var opaqueKind = map[string]string{"texref": "image", "samplerref": "sampler", "surfref": "surface"}

// line rewrites lines[i] (and, for an entry's header, its parameter list),
// appending to out; it returns the index of the last line it read.
func (r *rewriter) line(out, lines []string, i int) ([]string, int, error) {
	l := lines[i]
	t := strings.TrimSpace(l)
	if r.depth == 0 {
		switch {
		case strings.HasPrefix(t, ".target"):
			return append(out, strings.Replace(l, ", texmode_independent", "", 1)), i, nil
		case strings.HasPrefix(t, ".entry ") || strings.HasPrefix(t, ".visible .entry "):
			r.skip = false
			return r.entryHeader(out, lines, i)
		case isFuncHeader(t):
			r.fn, r.entry, r.objects, r.start, r.skip = funcName(t), nil, nil, len(out), false
			return append(out, l), i, nil
		case opaqueRe.MatchString(t) && (strings.HasPrefix(t, ".global") || strings.HasPrefix(t, ".const")):
			return out, i, nil // baked into texture objects, or refused where used
		}
	}
	inBody := r.depth > 0
	r.depth += strings.Count(l, "{") - strings.Count(l, "}")
	if r.skip || !inBody {
		if !r.skip {
			out = append(out, l)
			if r.depth > 0 && r.entry != nil && len(r.objects) > 0 && t == "{" {
				out = append(out, objReg)
			}
		}
		return out, i, nil
	}
	nl, err := r.body(l, t)
	if err != nil {
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			return nil, i, err
		}
		return r.refuse(out, ue), i, nil
	}
	return append(out, nl...), i, nil
}

// body rewrites a line of a function body.
func (r *rewriter) body(l, t string) ([]string, error) {
	if t == strings.TrimSpace(objReg) {
		return nil, nil // added again after the brace
	}
	for _, g := range r.opaque {
		if g.re.MatchString(l) {
			return nil, &UnsupportedError{Kernel: r.fn, Construct: "the program-scope " + g.what}
		}
	}
	if m := callRe.FindStringSubmatch(l); m != nil {
		if bad := r.badFuncs[m[1]]; bad != nil {
			return nil, &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("the function %s, which uses %s", m[1], bad.Construct)}
		}
	}
	nl := []string{l}
	if imageOpRe.MatchString(l) {
		var err error
		if nl, err = r.image(l); err != nil {
			return nil, err
		}
	}
	if err := r.leftObjects(nl); err != nil {
		return nil, err
	}
	if !strings.Contains(l, "%envreg") {
		return nl, nil
	}
	s, err := r.envreg(l)
	return []string{s}, err
}

// refuse drops the function being read from out and records why: a
// kernel in Module.Refused, a function in badFuncs.
func (r *rewriter) refuse(out []string, e *UnsupportedError) []string {
	r.skip = true
	if r.entry == nil {
		r.badFuncs[r.fn] = e
		return out[:r.start]
	}
	k := len(r.m.Entries) - 1
	at := r.headers[k].at
	r.m.Entries, r.headers, r.entry = r.m.Entries[:k], r.headers[:k], nil
	r.m.Refused = append(r.m.Refused, e)
	return out[:at]
}

func isFuncHeader(t string) bool {
	for _, p := range []string{".func ", ".visible .func ", ".weak .func ", ".extern .func "} {
		if strings.HasPrefix(t, p) {
			return !strings.HasPrefix(p, ".extern")
		}
	}
	return false
}

// funcName returns the name of the function a .func header declares.
func funcName(t string) string {
	rest := t[strings.Index(t, ".func")+len(".func"):]
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "(") { // a return parameter list comes first
		if j := strings.Index(rest, ")"); j >= 0 {
			rest = strings.TrimSpace(rest[j+1:])
		}
	}
	if j := strings.IndexAny(rest, "( "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// envreg replaces the environment registers of line l.
func (r *rewriter) envreg(l string) (string, error) {
	if m := movEnvRe.FindStringSubmatch(l); m != nil {
		if r.entry == nil {
			return "", &UnsupportedError{Kernel: r.fn, Construct: "get_work_dim() (%envreg9) in a function that is not a kernel"}
		}
		r.entry.WorkDim = true
		return fmt.Sprintf("%sld.param.u32 \t%s, [%s%s];%s", m[1], m[2], r.fn, workDimSuffix, m[3]), nil
	}
	var bad error
	s := envregRe.ReplaceAllStringFunc(l, func(reg string) string {
		n, _ := strconv.Atoi(reg[len("%envreg"):])
		switch {
		case n <= 5:
			return "0"
		case n <= 8:
			return "%nctaid." + string("xyz"[n-6])
		}
		if bad == nil {
			bad = &UnsupportedError{Kernel: r.fn, Construct: fmt.Sprintf("the driver environment register %s in %q", reg, strings.TrimSpace(l))}
		}
		return reg
	})
	return s, bad
}

// entryHeader rewrites an entry's header and parameter list, starting at
// lines[i], and records the entry.
func (r *rewriter) entryHeader(out, lines []string, i int) ([]string, int, error) {
	t := strings.TrimSpace(lines[i])
	t = strings.TrimPrefix(t, ".visible ")
	name := strings.TrimPrefix(t, ".entry ")
	if j := strings.IndexAny(name, "( "); j >= 0 {
		name = name[:j]
	}
	r.fn, r.objects = name, nil
	r.m.Entries = append(r.m.Entries, Entry{Name: name})
	r.entry = &r.m.Entries[len(r.m.Entries)-1]
	h := header{at: len(out), last: -1}
	out = append(out, ".visible "+t)
	if strings.HasSuffix(t, ")") { // no parameters
		r.headers = append(r.headers, h)
		return out, i, nil
	}
	for i++; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == ")" {
			break
		}
		p, decl, comment, hidden, err := r.param(lines[i])
		if err != nil {
			return nil, i, err
		}
		if hidden {
			continue
		}
		if p.Object != 0 {
			if r.objects == nil {
				r.objects = map[string]int{}
			}
			f := strings.Fields(decl)
			r.objects[f[len(f)-1]] = len(r.entry.Params)
		}
		r.entry.Params = append(r.entry.Params, p)
		h.last, h.decl, h.comment = len(out), decl, comment
		out = append(out, "\t.param "+decl+","+comment)
	}
	if i == len(lines) {
		return nil, i, fmt.Errorf("rewrite PTX: %w: the parameter list of kernel %s has no end", driver.ErrInvalidBinary, name)
	}
	if h.last >= 0 { // the last parameter takes no comma
		out[h.last] = "\t.param " + h.decl + h.comment
	}
	r.headers = append(r.headers, h)
	out = append(out, lines[i])
	if len(r.objects) > 0 && usesBuffer1D(lines, i) {
		out = r.refuse(out, errBuffer1D(name).(*UnsupportedError))
	}
	return out, i, nil
}

// addHidden adds the hidden parameters to the parameter list of every
// entry: the texture objects and channel codes its image instructions
// read, then the work dimension if it reads it. The bodies, rewritten
// after the headers, tell which.
func (r *rewriter) addHidden(out []string) []string {
	for k := len(r.headers) - 1; k >= 0; k-- {
		e, h := &r.m.Entries[k], r.headers[k]
		var hidden []string
		for j, hp := range e.Hidden {
			hidden = append(hidden, hp.decl(e.Name, j))
		}
		if e.WorkDim {
			hidden = append(hidden, ".u32 "+e.Name+workDimSuffix)
		}
		if len(hidden) == 0 {
			continue
		}
		for j := range hidden {
			decl, comment, _ := strings.Cut(hidden[j], " //")
			if comment != "" {
				comment = " //" + comment
			}
			comma := ","
			if j == len(hidden)-1 {
				comma = ""
			}
			hidden[j] = "\t.param " + decl + comma + comment
		}
		if h.last < 0 {
			if head := strings.TrimSpace(out[h.at]); strings.HasSuffix(head, ")") { // ".entry name()": open the list
				out[h.at] = strings.TrimSuffix(head, ")")
				out = slices.Insert(out, h.at+1, append(hidden, ")")...)
			} else {
				out = slices.Insert(out, h.at+1, hidden...)
			}
			continue
		}
		out[h.last] = "\t.param " + h.decl + "," + h.comment
		out = slices.Insert(out, h.last+1, hidden...)
	}
	return out
}

// param parses a parameter line of an entry: it returns the parameter,
// its declaration without the .ptr attributes and those attributes as a
// comment; hidden reports a parameter that the rewrite adds (one read
// from rewritten PTX, recorded in the entry to be added again).
func (r *rewriter) param(l string) (p Param, decl, comment string, hidden bool, err error) {
	m := paramRe.FindStringSubmatch(l)
	if m == nil {
		return p, "", "", false, fmt.Errorf("rewrite PTX: %w: kernel %s: cannot read the parameter %q", driver.ErrInvalidBinary, r.fn, strings.TrimSpace(l))
	}
	decl = m[1]
	if op := opaqueRe.FindStringSubmatch(decl + " " + m[3]); op != nil {
		return objectParam(op[1], decl)
	}
	attrs := ptrAttrRe.FindStringSubmatch(decl)
	if attrs == nil {
		attrs = ptrAttrRe.FindStringSubmatch(m[3])
	}
	decl = strings.Join(strings.Fields(ptrAttrRe.ReplaceAllString(decl, "")), " ")
	fields := strings.Fields(decl)
	if len(fields) == 0 {
		return p, "", "", false, fmt.Errorf("rewrite PTX: %w: kernel %s: empty parameter", driver.ErrInvalidBinary, r.fn)
	}
	name := fields[len(fields)-1]
	if strings.HasSuffix(name, workDimSuffix) {
		r.entry.WorkDim = true
		return p, "", "", true, nil
	}
	if strings.Contains(name, hiddenInfix) {
		hp, err := parseHidden(r.fn, m[3])
		r.entry.Hidden = append(r.entry.Hidden, hp)
		return p, "", "", true, err
	}
	if p.Size, p.Align, err = paramSize(fields); err != nil {
		return p, "", "", false, fmt.Errorf("rewrite PTX: %w: kernel %s: %v", driver.ErrInvalidBinary, r.fn, err)
	}
	if attrs != nil {
		comment = " // " + attrs[0]
		r.constParam = r.constParam || attrs[1] == "const"
		if attrs[1] == "shared" {
			p.Local, p.LocalAlign = true, 1
			if attrs[2] != "" {
				p.LocalAlign, _ = strconv.Atoi(attrs[2])
			}
		}
	}
	return p, decl, comment, false, nil
}

// constToGlobal moves the const state space of the lines to global: the
// .const variables and the instructions that name the space. Comments
// keep theirs (a parameter's `// .ptr .const` attribute).
func constToGlobal(lines []string) {
	for i, l := range lines {
		code, comment, found := strings.Cut(l, "//")
		code = constUse.ReplaceAllString(constDecl.ReplaceAllString(code, "$1.global"), "$1.global")
		if found {
			code += "//" + comment
		}
		lines[i] = code
	}
}

// paramSize returns the size and alignment of a parameter declared by
// fields (type, name), as in ".u64 x" or ".align 8 .b8 x[16]".
func paramSize(fields []string) (size, align int, err error) {
	if len(fields) == 2 {
		if m := scalarRe.FindStringSubmatch(fields[0]); m != nil {
			n, _ := strconv.Atoi(m[2])
			return n / 8, n / 8, nil
		}
	}
	if m := arrayRe.FindStringSubmatch(strings.Join(fields, " ")); m != nil {
		size, _ = strconv.Atoi(m[3])
		align = 1
		if m[1] != "" {
			align, _ = strconv.Atoi(m[1])
		}
		return size, align, nil
	}
	return 0, 0, errors.New("parameter type " + strings.Join(fields, " ") + " not understood")
}
