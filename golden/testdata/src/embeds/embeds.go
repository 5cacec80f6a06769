// Package embeds names sources that the go command will not embed in the
// generated file.
package embeds

import "github.com/dgen-go/dgen/rt"

// A source in a nested module.
//
//dgen:program source=sub/k.cl
var Nested rt.Program

// A source that is a symbolic link to a file of the package.
//
//dgen:program source=link.cl
var Link rt.Program

// A source in a directory that is a symbolic link.
//
//dgen:program source=linked/k.cl
var LinkedDir rt.Program

// A source whose name Windows reserves.
//
//dgen:program source=aux.cl
var Aux rt.Program

// A source whose name a //go:embed pattern would read as a glob.
//
//dgen:program source=k[1].cl
var Glob rt.Program

// A header reached through a symbolic link.
//
//dgen:program source=h.cl
var Header rt.Program
