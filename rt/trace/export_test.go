package trace

import "runtime"

var runtimeCallers = runtime.Callers
