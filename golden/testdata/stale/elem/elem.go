// Package elem declares a device global's element type in another
// package than the global, where the generated file cannot guard it.
package elem

// Pt is the element type.
type Pt struct {
	X, Y float32
}
