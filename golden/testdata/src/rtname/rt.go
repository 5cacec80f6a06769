package rtname

// rt collides with the runtime's import name.
var rt = "not the runtime"

var _ = rt

// context names a variable too: the generated file imports the standard
// library's package context under another name.
var context = "not the standard library's"

var _ = context
