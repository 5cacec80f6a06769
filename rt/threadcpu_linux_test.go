package rt_test

import "syscall"

// threadCPU returns the user and system CPU time of the calling thread so
// far (RUSAGE_THREAD).
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
