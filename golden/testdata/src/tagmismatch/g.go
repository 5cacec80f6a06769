//go:build linux

package tagmismatch

import "github.com/dgen-go/dgen/rt"

//dgen:global
var OnlyLinux rt.DeviceGlobal[float32]
