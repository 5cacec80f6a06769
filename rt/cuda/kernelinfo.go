//go:build cgo

package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// What a kernel says of itself (driver.KernelDescriber). A CUDA module
// carries no argument information; a program built from source with
// -cl-kernel-arg-info keeps what NVIDIA's OpenCL said of its kernels'
// arguments while it compiled them (argInfos).

// errOffset is the error of a launch with a global work offset: the
// rewritten PTX reads the offset as zero.
var errOffset = fmt.Errorf("cuLaunchKernel: a global work offset: %w by the CUDA backend (use DGEN_BACKEND=opencl)", errors.ErrUnsupported)

// argInfoOption is the build option that makes a program keep its
// kernels' argument information.
const argInfoOption = "-cl-kernel-arg-info"

// argInfos returns what the compiler's program p says of the arguments of
// each of its kernels, when options ask for it (argInfoOption), else nil.
func argInfos(p driver.Program, options string) map[string][]driver.ArgInfo {
	if !hasOption(options, argInfoOption) {
		return nil
	}
	names, err := p.KernelNames()
	if err != nil {
		return nil
	}
	out := make(map[string][]driver.ArgInfo, len(names))
	for _, name := range names {
		k, err := p.NewKernel(name)
		if err != nil {
			continue
		}
		kd, ok := k.(driver.KernelDescriber)
		n, err := k.NumArgs()
		if ok && err == nil {
			infos := make([]driver.ArgInfo, n)
			for i := range infos {
				if infos[i], err = kd.ArgInfo(i); err != nil {
					break
				}
			}
			if err == nil {
				out[name] = infos
			}
		}
		k.Release()
	}
	return out
}

// CompileWorkGroupSize implements driver.KernelDescriber: the block size
// that the entry's .reqntid directive requires, which NVIDIA's OpenCL
// writes for reqd_work_group_size.
func (k *kernel) CompileWorkGroupSize(device uintptr) ([3]int, error) {
	i, _, err := k.p.c.device(device)
	if err != nil {
		return [3]int{}, err
	}
	return reqntid(k.p.ptx[i].PTX, k.name), nil
}

// reqntid returns the sizes of the .reqntid directive of the entry called
// name in ptx, all zero where it has none; sizes it leaves out are 1.
func reqntid(ptx []byte, name string) [3]int {
	i := bytes.Index(ptx, []byte(".entry "+name+"("))
	if i < 0 {
		return [3]int{}
	}
	head := ptx[i:]
	if j := bytes.IndexByte(head, '{'); j >= 0 {
		head = head[:j]
	}
	j := bytes.Index(head, []byte(".reqntid"))
	if j < 0 {
		return [3]int{}
	}
	line := head[j+len(".reqntid"):]
	if e := bytes.IndexByte(line, '\n'); e >= 0 {
		line = line[:e]
	}
	out := [3]int{1, 1, 1}
	for d, f := range strings.Split(string(line), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d > 2 {
			return [3]int{}
		}
		out[d] = n
	}
	return out
}

// Attributes implements driver.KernelDescriber: a CUDA module keeps no
// source attributes, so it returns "".
func (k *kernel) Attributes() (string, error) { return "", nil }

// ArgInfo implements driver.KernelDescriber from what NVIDIA's OpenCL
// said while it compiled the program with -cl-kernel-arg-info.
func (k *kernel) ArgInfo(i int) (driver.ArgInfo, error) {
	infos, ok := k.p.args[k.name]
	if !ok {
		return driver.ArgInfo{}, fmt.Errorf("argument %d of kernel %s: %w: the program was loaded from PTX or built without %s", i, k.name, driver.ErrNoArgInfo, argInfoOption)
	}
	if i < 0 || i >= len(infos) {
		return driver.ArgInfo{}, fmt.Errorf("argument %d of kernel %s: it takes %d arguments", i, k.name, len(infos))
	}
	return infos[i], nil
}

var _ driver.KernelDescriber = (*kernel)(nil)
