//go:build !linux

package rt_test

// threadCPU returns 0: only Linux gives a thread's CPU time.
func threadCPU() int64 { return 0 }
