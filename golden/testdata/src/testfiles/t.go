// Package testfiles declares globals in its test files.
package testfiles

// Pt is an element type of this package that its external test package
// allocates, which the test package's generated file must qualify.
type Pt struct{ X, Y float32 }
