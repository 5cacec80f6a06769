#include "textflag.h"

// func fpCallers(pcs *siteKey, n int) int
//
// With a frame size of 0 the assembler saves no frame pointer, so BP is
// still the caller's frame pointer and 0(SP) the return address into the
// caller. Each Go frame on amd64 stores its caller's frame pointer at 0(BP)
// and its return address at 8(BP). The walk ends at n frames or at the top
// of the stack (a zero frame pointer or return address), and gives up,
// returning 0, on a frame pointer that does not lie above the previous one
// by at most 1 MiB: a chain that crosses into C (a cgo callback) is not
// followed.
TEXT ·fpCallers(SB),NOSPLIT,$0-24
	MOVQ	pcs+0(FP), DI
	MOVQ	n+8(FP), CX
	XORQ	AX, AX
	TESTQ	CX, CX
	JLE	done
	MOVQ	0(SP), DX
	MOVQ	DX, 0(DI)
	INCQ	AX
	CMPQ	AX, CX
	JGE	done
	MOVQ	BP, SI
	TESTQ	SI, SI
	JZ	done
loop:
	// SI is a frame pointer, not zero, and fewer than n frames are stored.
	MOVQ	8(SI), DX
	TESTQ	DX, DX
	JZ	done
	MOVQ	DX, (DI)(AX*8)
	INCQ	AX
	CMPQ	AX, CX
	JGE	done
	MOVQ	0(SI), R8
	MOVQ	R8, R9
	SUBQ	SI, R9
	JLS	top
	CMPQ	R9, $0x100000
	JHI	fail
	MOVQ	R8, SI
	JMP	loop
top:
	// The next frame pointer is not above this one: the end of the chain
	// if it is zero, else not a Go frame.
	TESTQ	R8, R8
	JZ	done
fail:
	XORQ	AX, AX
done:
	MOVQ	AX, ret+16(FP)
	RET
