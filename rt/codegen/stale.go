package codegen

import (
	"reflect"

	"github.com/dgen-go/dgen/rt/internal/desc"
)

// Guards against stale generated code. A generated file names the type
// argument of every generic call it makes (SetScalar[int32],
// SetBuffer[float32], GlobalVar[Pt], ...), so that a declaration whose
// types changed after go generate read it fails to compile there. For
// each struct type it binds (a kernel spec, a struct element of a device
// global or of a buffer) declared in its package, it also writes guards
// that quote a message saying to run go generate:
//
//	// _dgenShape_Step is Step as go generate read it.
//	type _dgenShape_Step struct{ Cols int32; Power rt.Buffer[float32] }
//
//	var _ codegen.Fresh = codegen.Layout[[1 - min(1, unsafe.Sizeof(Step{})^unsafe.Sizeof(_dgenShape_Step{})|unsafe.Offsetof(Step{}.Cols)^unsafe.Offsetof(_dgenShape_Step{}.Cols)|...)]struct{}]("ERROR: ...")
//
//	func _(v Step) {
//		var _ codegen.Is[int32] = codegen.TypeOf(v.Cols, "ERROR: ...")
//	}
//
// The first guard's array length is 1 while the struct's size and its
// fields' offsets are the ones go generate saw, and 0 otherwise (fields
// added, removed or reordered), where the compiler reports the mismatch
// and quotes the message; each field guard fails, quoting its message,
// when the field's type changed. What the compiler cannot see (a struct
// of another package) is caught at first use: the descriptor records a
// fingerprint of the declaration's shape (ShapeOf), which registration
// compares with the type's shape by reflection; a mismatch is an error
// wrapping rt.ErrStale that names the declaration.

// Layout is the type of a generated file's layout guard.
type Layout[V any] string

// Fresh is the Layout of a struct whose layout is the one go generate saw.
type Fresh = Layout[[1]struct{}]

// Is is the type of a generated file's field guard for a field of type T.
type Is[T any] string

// TypeOf returns msg as an Is of v's type: a generated field guard
// assigns it to an Is of the type that go generate saw, which compiles
// only while the field has that type.
func TypeOf[T any](v T, msg string) Is[T] { return Is[T](msg) }

// Shape is the fingerprint of a declaration's Go type as go generate read
// it (field names, types and order, and array lengths, through nested
// structs and arrays): the type and the 64-bit xxhash of its shape.
type Shape = desc.Shape

// ShapeOf returns the Shape of T that go generate fingerprinted as hash.
func ShapeOf[T any](hash uint64) Shape { return Shape{Type: reflect.TypeFor[T](), Hash: hash} }
