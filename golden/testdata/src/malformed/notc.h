This header explains the kernels below.
It is not C.
