package clsrc

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"
)

// TypeInfo describes an OpenCL C scalar or vector type.
type TypeInfo struct {
	Name  string // the type's name: "float", "uint4"
	Elem  string // the component's scalar type: "float", "uint"
	Lanes int    // 1 for a scalar, else 2, 3, 4, 8 or 16
	Size  int    // size in bytes; a 3-component vector is as big as a 4-component one
	Align int    // alignment in bytes: the size, for every scalar and vector type
	// Go is the matching Go type: "float32", or a fixed array "[4]float32"
	// (four elements for a 3-component vector). half maps to uint16, the
	// bits of an IEEE 754 binary16 value.
	Go string
}

var scalarTable = []struct {
	name string
	size int
	goT  string
}{
	{"char", 1, "int8"}, {"uchar", 1, "uint8"}, {"short", 2, "int16"}, {"ushort", 2, "uint16"},
	{"int", 4, "int32"}, {"uint", 4, "uint32"}, {"long", 8, "int64"}, {"ulong", 8, "uint64"},
	{"half", 2, "uint16"}, {"float", 4, "float32"}, {"double", 8, "float64"},
}

var vectorLanes = []int{2, 3, 4, 8, 16}

// Types returns the table of OpenCL C scalar and vector types with their
// sizes, alignments and Go types: the scalars first, then each scalar's
// vectors. bool, size_t, ptrdiff_t, intptr_t and uintptr_t are not in it:
// their size is the device's choice and they may not be kernel arguments.
func Types() []TypeInfo {
	var ts []TypeInfo
	for _, s := range scalarTable {
		ts = append(ts, TypeInfo{Name: s.name, Elem: s.name, Lanes: 1, Size: s.size, Align: s.size, Go: s.goT})
	}
	for _, s := range scalarTable {
		for _, n := range vectorLanes {
			phys := n
			if n == 3 {
				phys = 4
			}
			ts = append(ts, TypeInfo{
				Name: s.name + strconv.Itoa(n), Elem: s.name, Lanes: n,
				Size: s.size * phys, Align: s.size * phys,
				Go: "[" + strconv.Itoa(phys) + "]" + s.goT,
			})
		}
	}
	return ts
}

// LookupType returns the table entry of a scalar or vector type name.
// Multi-word spellings ("unsigned int") are accepted.
func LookupType(name string) (TypeInfo, bool) {
	name = canonicalType(strings.Fields(name))
	for _, s := range scalarTable {
		if !strings.HasPrefix(name, s.name) {
			continue
		}
		rest := name[len(s.name):]
		if rest == "" {
			return TypeInfo{Name: s.name, Elem: s.name, Lanes: 1, Size: s.size, Align: s.size, Go: s.goT}, true
		}
		n, err := strconv.Atoi(rest)
		if err != nil || strconv.Itoa(n) != rest {
			continue
		}
		for _, l := range vectorLanes {
			if l == n {
				phys := n
				if n == 3 {
					phys = 4
				}
				return TypeInfo{Name: name, Elem: s.name, Lanes: n, Size: s.size * phys,
					Align: s.size * phys, Go: "[" + strconv.Itoa(phys) + "]" + s.goT}, true
			}
		}
	}
	return TypeInfo{}, false
}

// ArgClass is how the host passes a kernel argument.
type ArgClass int

// The argument classes.
const (
	// ArgValue is a value passed by clSetKernelArg with its bytes: a
	// scalar, a vector, or a struct.
	ArgValue ArgClass = iota
	// ArgBuffer is a __global or __constant pointer: a buffer of Elem.
	ArgBuffer
	// ArgLocal is a __local pointer: the host passes only a size.
	ArgLocal
)

// String returns the class's name.
func (c ArgClass) String() string {
	switch c {
	case ArgValue:
		return "value"
	case ArgBuffer:
		return "buffer"
	case ArgLocal:
		return "local memory"
	}
	return fmt.Sprintf("ArgClass(%d)", int(c))
}

// Field is a member of a struct for layout and declaration: its name and
// its OpenCL C type, a scalar or vector type, a struct known to the caller
// ("struct Inner"), or an array of those with one or more "[N]" suffixes
// ("float[4]", "int2[2][3]").
type Field struct {
	Name string
	Type string
}

// FieldLayout is a field's place in a struct.
type FieldLayout struct {
	Name   string
	Type   string
	Offset int
	Size   int
	Align  int
}

// Layout is the layout of a struct under OpenCL C's rules (each member at
// the next multiple of its alignment; the struct aligned to its largest
// member alignment and padded to a multiple of it).
type Layout struct {
	Fields []FieldLayout
	Size   int
	Align  int
}

// StructLayout computes the OpenCL C layout of a struct with the given
// fields. structs holds the layouts of struct types that fields may use,
// keyed by their spelling ("struct Inner"); it may be nil.
func StructLayout(fields []Field, structs map[string]*Layout) (*Layout, error) {
	l := &Layout{Align: 1}
	seen := map[string]bool{}
	for _, f := range fields {
		if !isCIdent(f.Name) {
			return nil, fmt.Errorf("field name %q is not an OpenCL C identifier", f.Name)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("duplicate field %s", f.Name)
		}
		seen[f.Name] = true
		size, align, err := typeSize(f.Type, structs)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", f.Name, err)
		}
		off := roundUp(l.Size, align)
		l.Fields = append(l.Fields, FieldLayout{Name: f.Name, Type: f.Type, Offset: off, Size: size, Align: align})
		l.Size = off + size
		l.Align = max(l.Align, align)
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("a struct needs at least one field")
	}
	l.Size = roundUp(l.Size, l.Align)
	return l, nil
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// typeSize returns the size and alignment of an OpenCL C type spelling.
func typeSize(t string, structs map[string]*Layout) (size, align int, err error) {
	base, dims, err := splitArray(t)
	if err != nil {
		return 0, 0, err
	}
	if info, ok := LookupType(base); ok {
		size, align = info.Size, info.Align
	} else if l, ok := structs[base]; ok && l != nil {
		size, align = l.Size, l.Align
	} else {
		return 0, 0, fmt.Errorf("type %q has no known size", base)
	}
	for _, d := range dims {
		if size > (1<<31)/d {
			return 0, 0, fmt.Errorf("type %q is too large", t)
		}
		size *= d
	}
	return size, align, nil
}

// splitArray splits "T[2][3]" into "T" and [2 3].
func splitArray(t string) (string, []int, error) {
	t = strings.TrimSpace(t)
	i := strings.IndexByte(t, '[')
	if i < 0 {
		return t, nil, nil
	}
	base, rest := strings.TrimSpace(t[:i]), t[i:]
	var dims []int
	for rest != "" {
		j := strings.IndexByte(rest, ']')
		if rest[0] != '[' || j < 0 {
			return "", nil, fmt.Errorf("malformed array type %q", t)
		}
		n, err := strconv.Atoi(strings.TrimSpace(rest[1:j]))
		if err != nil || n <= 0 {
			return "", nil, fmt.Errorf("malformed array length in %q", t)
		}
		dims = append(dims, n)
		rest = strings.TrimSpace(rest[j+1:])
	}
	return base, dims, nil
}

func isCIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// StructDecl returns the OpenCL C declaration of "struct name" with the
// given fields, in order, with the layout it has. Each member carries a
// comment with its offset and size, and the closing line the struct's size
// and alignment, so that the generated image documents the layout that the
// generator checked against Go's.
func StructDecl(name string, fields []Field, structs map[string]*Layout) (string, *Layout, error) {
	if !isCIdent(name) {
		return "", nil, fmt.Errorf("struct name %q is not an OpenCL C identifier", name)
	}
	l, err := StructLayout(fields, structs)
	if err != nil {
		return "", nil, fmt.Errorf("struct %s: %v", name, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "struct %s {\n", name)
	for _, f := range l.Fields {
		base, dims, _ := splitArray(f.Type)
		var suffix strings.Builder
		for _, d := range dims {
			fmt.Fprintf(&suffix, "[%d]", d)
		}
		fmt.Fprintf(&b, "\t%s %s%s; /* offset %d, size %d */\n", base, f.Name, suffix.String(), f.Offset, f.Size)
	}
	fmt.Fprintf(&b, "}; /* size %d, align %d */\n", l.Size, l.Align)
	return b.String(), l, nil
}

// ForGo returns the table entry of the OpenCL C scalar that a Go basic
// type of kind k is: int32 is int, uint16 is ushort, float32 is float.
// The sized integer and float kinds have one; no other kind has.
func ForGo(k types.BasicKind) (TypeInfo, bool) {
	name := types.Typ[k].Name()
	for _, s := range scalarTable {
		if s.goT == name {
			return LookupType(s.name)
		}
	}
	return TypeInfo{}, false
}
