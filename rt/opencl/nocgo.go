//go:build !cgo

package opencl

import (
	"errors"

	"github.com/dgen-go/dgen/rt/driver"
)

// Built without cgo (CGO_ENABLED=0, or cross-compiled without a C
// compiler), the package still registers the backend, so that a program
// importing it builds everywhere; opening a context then fails with
// ErrNoCgo instead of the build failing with "build constraints exclude all
// Go files".
func init() { driver.Register("opencl", Backend{}) }

// ErrNoCgo is the error of every call of a backend built without cgo.
var ErrNoCgo = errors.New("dgen's OpenCL backend was built without cgo: build with CGO_ENABLED=1 and a C compiler, the OpenCL headers and the ICD loader (scripts/deps.sh)")

// Backend is the OpenCL implementation of driver.Backend; built without
// cgo, it has no platform and opens no context.
type Backend struct{}

// Platforms returns ErrNoCgo.
func (Backend) Platforms() ([]driver.PlatformInfo, error) { return nil, ErrNoCgo }

// NewContext returns ErrNoCgo.
func (Backend) NewContext([]driver.DeviceInfo) (driver.Context, error) { return nil, ErrNoCgo }
