package trace

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// linkFile gives the open file f the name to as well, f being the file at
// from: through /proc/self/fd, so that the link is f's whatever from
// names by now, else by from after a check that it still names f.
func linkFile(f *os.File, from, to string) error {
	proc, err := syscall.BytePtrFromString("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return err
	}
	dst, err := syscall.BytePtrFromString(to)
	if err != nil {
		return err
	}
	const atSymlinkFollow = 0x400
	atFDCWD := ^uintptr(99) // AT_FDCWD, -100
	_, _, errno := syscall.Syscall6(syscall.SYS_LINKAT, atFDCWD, uintptr(unsafe.Pointer(proc)),
		atFDCWD, uintptr(unsafe.Pointer(dst)), atSymlinkFollow, 0)
	if errno == 0 {
		return nil
	}
	return linkChecked(f, from, to)
}
