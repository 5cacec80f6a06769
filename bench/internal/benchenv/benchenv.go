// Package benchenv opens the context that bench's programs measure on: the
// environment's configuration (rt.ConfigFromEnv), with the device and
// backend that a program's -backend flag names.
package benchenv

import (
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt"
)

// Config returns the environment's configuration for backend: "cpu"
// (PoCL through rt/opencl), or "cuda" or "opencl" on the first GPU.
func Config(backend string) (rt.Config, error) {
	cfg, err := rt.ConfigFromEnv(os.Getenv)
	if err != nil {
		return cfg, err
	}
	switch backend {
	case "cpu":
		cfg.Device, cfg.Backend = "cpu", rt.BackendOpenCL
	case "cuda", "opencl":
		cfg.Device, cfg.Backend = "gpu", rt.Backend(backend)
	default:
		return cfg, fmt.Errorf("-backend %q: want cpu, cuda or opencl", backend)
	}
	return cfg, nil
}
