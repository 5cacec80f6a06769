#include "textflag.h"

// func rdtsc() uint64
TEXT ·rdtsc(SB),NOSPLIT,$0-8
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ret+0(FP)
	RET

// func publish(p *uint64, v uint64)
TEXT ·publish(SB),NOSPLIT,$0-16
	MOVQ	p+0(FP), AX
	MOVQ	v+8(FP), BX
	MOVQ	BX, 0(AX)
	RET
