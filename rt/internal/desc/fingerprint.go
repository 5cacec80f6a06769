package desc

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Shape is the fingerprint of a declaration's Go type as go generate read
// it: the type, and the 64-bit xxhash of its shape (ShapeString) then.
// Registration compares the hash with the type's shape now.
type Shape struct {
	Type reflect.Type
	Hash uint64
}

// rtPath is the import path of rt, which defines the handle types
// (Buffer[T], Local[T], Image, Sampler) that a shape names without their
// insides.
const rtPath = "github.com/dgen-go/dgen/rt"

// ShapeString returns the shape of t that dgen fingerprints, the same
// string that dgen writes from go/types: field names, types and order,
// and array lengths, through nested structs and arrays, with basic types
// by kind and rt's handle types by name ("rt.Buffer"), so that neither a
// renamed type nor another rt changes it. Sizes and offsets are left out:
// they follow from the rest on one platform and differ across platforms.
func ShapeString(t reflect.Type) string {
	var b strings.Builder
	writeShape(&b, t)
	return b.String()
}

func writeShape(b *strings.Builder, t reflect.Type) {
	if t.PkgPath() == rtPath && t.Name() != "" {
		name, _, _ := strings.Cut(t.Name(), "[")
		b.WriteString("rt." + name)
		return
	}
	switch t.Kind() {
	case reflect.Array:
		b.WriteString("[" + strconv.Itoa(t.Len()) + "]")
		writeShape(b, t.Elem())
	case reflect.Struct:
		b.WriteString("struct{")
		for i := range t.NumField() {
			f := t.Field(i)
			b.WriteString(f.Name + " ")
			writeShape(b, f.Type)
			b.WriteString(";")
		}
		b.WriteString("}")
	default:
		b.WriteString(t.Kind().String())
	}
}

// staleShape returns an error wrapping ErrStale when the shape of s's type
// is not the one go generate fingerprinted; what says whose type it is.
func staleShape(what string, s Shape) error {
	if s.Type == nil {
		return nil // a file of contract version 2 records no shape
	}
	if now := ShapeString(s.Type); xxhash.Sum64String(now) != s.Hash {
		return fmt.Errorf("%w: %s %s changed after go generate read it (it is now %s); run go generate", ErrStale, what, s.Type, now)
	}
	return nil
}
