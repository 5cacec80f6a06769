// Package progcache is a context's program and kernel cache: programs
// built from device images, kept in memory (least recently used first out
// above a size threshold) over the persistent cache of rt/diskcache, and
// the kernel objects of those programs, one per (program, kernel name,
// device), behind a lookup that takes no lock and allocates nothing.
//
// The cache decides; it makes nothing itself. A Builder that rt supplies
// builds programs from source, loads them from binaries and creates
// kernels; Hooks receive its trace events. Every program is made by one
// goroutine while others asking for it wait (single flight); a build error
// is stored, any other failure is retried by the waiters, and out of memory
// evicts every other program and retries once.
//
// Eviction passes over a program that a goroutine holds between finding it
// and making what it came for (a kernel object, an instance through
// Kernel.Spawn), so that no goroutine's lookup fails because another
// goroutine's build evicted its program; the last holder evicts what the
// threshold asks. Eviction and Close never wait for a holder: a goroutine
// that holds one kernel and asks for another, whose build would evict the
// first, cannot deadlock.
package progcache
