package rtname

// rt collides with the runtime's import name.
var rt = "not the runtime"

var _ = rt
