//go:build amd64 && !purego

#include "textflag.h"

// func distLanesAVX(y *float64, dim int, qt *float64, lanes int, out, pf *float64)
TEXT ·distLanesAVX(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), SI
	MOVQ dim+8(FP), CX
	MOVQ qt+16(FP), DI
	MOVQ lanes+24(FP), DX
	MOVQ out+32(FP), R8
	MOVQ pf+40(FP), R11
	TESTQ R11, R11
	JZ   nopf
	LEAQ (R11)(CX*8), R12

pfloop:
	PREFETCHT0 (R11)
	ADDQ $64, R11
	CMPQ R11, R12
	JLT  pfloop

nopf:
	MOVQ DX, R9
	SHLQ $3, R9            // R9: bytes per row of qt (lanes·8)
	XORQ R10, R10          // R10: byte offset of the current block of lanes

next:
	MOVQ R9, AX
	SUBQ R10, AX           // AX: bytes of lanes left
	CMPQ AX, $128
	JGE  block16
	CMPQ AX, $64
	JGE  block8
	CMPQ AX, $32
	JGE  block4
	VZEROUPPER
	RET

block16:
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ SI, R11
	LEAQ (DI)(R10*1), R12
	MOVQ CX, R13

loop16:
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y1
	VSUBPD       32(R12), Y0, Y2
	VSUBPD       64(R12), Y0, Y3
	VSUBPD       96(R12), Y0, Y8
	VMULPD       Y1, Y1, Y1
	VMULPD       Y2, Y2, Y2
	VMULPD       Y3, Y3, Y3
	VMULPD       Y8, Y8, Y8
	VADDPD       Y1, Y4, Y4
	VADDPD       Y2, Y5, Y5
	VADDPD       Y3, Y6, Y6
	VADDPD       Y8, Y7, Y7
	ADDQ         $8, R11
	ADDQ         R9, R12
	DECQ         R13
	JNZ          loop16
	VSQRTPD      Y4, Y4
	VSQRTPD      Y5, Y5
	VSQRTPD      Y6, Y6
	VSQRTPD      Y7, Y7
	VMOVUPD      Y4, (R8)(R10*1)
	VMOVUPD      Y5, 32(R8)(R10*1)
	VMOVUPD      Y6, 64(R8)(R10*1)
	VMOVUPD      Y7, 96(R8)(R10*1)
	ADDQ         $128, R10
	JMP          next

block8:
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	MOVQ SI, R11
	LEAQ (DI)(R10*1), R12
	MOVQ CX, R13

loop8:
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y1
	VSUBPD       32(R12), Y0, Y2
	VMULPD       Y1, Y1, Y1
	VMULPD       Y2, Y2, Y2
	VADDPD       Y1, Y4, Y4
	VADDPD       Y2, Y5, Y5
	ADDQ         $8, R11
	ADDQ         R9, R12
	DECQ         R13
	JNZ          loop8
	VSQRTPD      Y4, Y4
	VSQRTPD      Y5, Y5
	VMOVUPD      Y4, (R8)(R10*1)
	VMOVUPD      Y5, 32(R8)(R10*1)
	ADDQ         $64, R10
	JMP          next

block4:
	VXORPD Y4, Y4, Y4
	MOVQ SI, R11
	LEAQ (DI)(R10*1), R12
	MOVQ CX, R13

loop4:
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y1
	VMULPD       Y1, Y1, Y1
	VADDPD       Y1, Y4, Y4
	ADDQ         $8, R11
	ADDQ         R9, R12
	DECQ         R13
	JNZ          loop4
	VSQRTPD      Y4, Y4
	VMOVUPD      Y4, (R8)(R10*1)
	ADDQ         $32, R10
	JMP          next

// Horizontal minimum of Y0 and Y1 into X0.
#define HMIN VMINPD Y1, Y0, Y0; VEXTRACTF128 $1, Y0, X1; VMINPD X1, X0, X0; VPERMILPD $1, X0, X1; VMINSD X1, X0, X0

// func minAVX(xs *float64, n int, inf float64) float64
TEXT ·minAVX(SB), NOSPLIT, $0-32
	MOVQ         xs+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD inf+16(FP), Y0
	VMOVAPD      Y0, Y1
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX

min8:
	CMPQ   AX, DX
	JGE    min8done
	VMINPD (SI)(AX*8), Y0, Y0
	VMINPD 32(SI)(AX*8), Y1, Y1
	ADDQ   $8, AX
	JMP    min8

min8done:
	HMIN

min1:
	CMPQ   AX, CX
	JGE    mindone
	VMINSD (SI)(AX*8), X0, X0
	INCQ   AX
	JMP    min1

mindone:
	VMOVSD X0, ret+24(FP)
	VZEROUPPER
	RET

// func minDiffAVX(row, v *float64, n int, inf float64) float64
TEXT ·minDiffAVX(SB), NOSPLIT, $0-40
	MOVQ         row+0(FP), SI
	MOVQ         v+8(FP), DI
	MOVQ         n+16(FP), CX
	VBROADCASTSD inf+24(FP), Y0
	VMOVAPD      Y0, Y1
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX

md8:
	CMPQ    AX, DX
	JGE     md8done
	VMOVUPD (SI)(AX*8), Y2
	VMOVUPD 32(SI)(AX*8), Y3
	VSUBPD  (DI)(AX*8), Y2, Y2
	VSUBPD  32(DI)(AX*8), Y3, Y3
	VMINPD  Y2, Y0, Y0
	VMINPD  Y3, Y1, Y1
	ADDQ    $8, AX
	JMP     md8

md8done:
	HMIN

md1:
	CMPQ   AX, CX
	JGE    mddone
	VMOVSD (SI)(AX*8), X2
	VSUBSD (DI)(AX*8), X2, X2
	VMINSD X2, X0, X0
	INCQ   AX
	JMP    md1

mddone:
	VMOVSD X0, ret+32(FP)
	VZEROUPPER
	RET

// func minDiffColsAVX(row, v, cm *float64, n int, ui, inf float64) float64
TEXT ·minDiffColsAVX(SB), NOSPLIT, $0-56
	MOVQ         row+0(FP), SI
	MOVQ         v+8(FP), DI
	MOVQ         cm+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD ui+32(FP), Y5
	VBROADCASTSD inf+40(FP), Y0
	VMOVAPD      Y0, Y1
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-4, DX

mc4:
	CMPQ    AX, DX
	JGE     mc4done
	VMOVUPD (SI)(AX*8), Y2
	VSUBPD  (DI)(AX*8), Y2, Y3
	VMINPD  Y3, Y0, Y0
	VSUBPD  Y5, Y2, Y4
	VMINPD  (R8)(AX*8), Y4, Y4
	VMOVUPD Y4, (R8)(AX*8)
	ADDQ    $4, AX
	JMP     mc4

mc4done:
	HMIN

mc1:
	CMPQ   AX, CX
	JGE    mcdone
	VMOVSD (SI)(AX*8), X2
	VSUBSD (DI)(AX*8), X2, X3
	VMINSD X3, X0, X0
	VSUBSD X5, X2, X4
	VMINSD (R8)(AX*8), X4, X4
	VMOVSD X4, (R8)(AX*8)
	INCQ   AX
	JMP    mc1

mcdone:
	VMOVSD X0, ret+48(FP)
	VZEROUPPER
	RET

// func minAndColsAVX(row, cm *float64, n int, inf float64) float64
TEXT ·minAndColsAVX(SB), NOSPLIT, $0-40
	MOVQ         row+0(FP), SI
	MOVQ         cm+8(FP), R8
	MOVQ         n+16(FP), CX
	VBROADCASTSD inf+24(FP), Y0
	VMOVAPD      Y0, Y1
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-4, DX

ma4:
	CMPQ    AX, DX
	JGE     ma4done
	VMOVUPD (SI)(AX*8), Y2
	VMINPD  Y2, Y0, Y0
	VMINPD  (R8)(AX*8), Y2, Y4
	VMOVUPD Y4, (R8)(AX*8)
	ADDQ    $4, AX
	JMP     ma4

ma4done:
	HMIN

ma1:
	CMPQ   AX, CX
	JGE    madone
	VMOVSD (SI)(AX*8), X2
	VMINSD X2, X0, X0
	VMINSD (R8)(AX*8), X2, X4
	VMOVSD X4, (R8)(AX*8)
	INCQ   AX
	JMP    ma1

madone:
	VMOVSD X0, ret+32(FP)
	VZEROUPPER
	RET

// func distLanesFMA(y *float64, dim int, qt *float64, lanes int, out, pf *float64)
TEXT ·distLanesFMA(SB), NOSPLIT, $0-48
	MOVQ  y+0(FP), SI
	MOVQ  dim+8(FP), CX
	MOVQ  qt+16(FP), DI
	MOVQ  lanes+24(FP), DX
	MOVQ  out+32(FP), R8
	MOVQ  pf+40(FP), R11
	TESTQ R11, R11
	JZ    fnopf
	LEAQ  (R11)(CX*8), R12

fpf:
	PREFETCHT0 (R11)
	ADDQ       $64, R11
	CMPQ       R11, R12
	JLT        fpf

fnopf:
	MOVQ DX, R9
	SHLQ $3, R9  // R9: bytes per row of qt
	MOVQ CX, BX
	SHRQ $1, BX  // BX: pairs of dims
	XORQ R10, R10

fnext:
	MOVQ R9, AX
	SUBQ R10, AX   // AX: bytes of lanes left
	CMPQ AX, $256  // 32 lanes: two blocks of 16
	JEQ  f16
	CMPQ AX, $192
	JGE  f24
	CMPQ AX, $128
	JGE  f16
	CMPQ AX, $64
	JGE  f8
	CMPQ AX, $32
	JGE  f4
	VZEROUPPER
	RET

f24:
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	MOVQ   SI, R11
	LEAQ   (DI)(R10*1), R12
	MOVQ   BX, R13
	TESTQ  R13, R13
	JZ     f24odd

f24loop:
	VBROADCASTSD (R11), Y0
	VBROADCASTSD 8(R11), Y1
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y3
	VSUBPD       32(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y4
	VSUBPD       64(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y5
	VSUBPD       96(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y6
	VSUBPD       128(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y7
	VSUBPD       160(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8
	VSUBPD       (R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y9
	VSUBPD       32(R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y10
	VSUBPD       64(R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y11
	VSUBPD       96(R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y12
	VSUBPD       128(R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y13
	VSUBPD       160(R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y14
	ADDQ         $16, R11
	ADDQ         R9, R12
	ADDQ         R9, R12
	DECQ         R13
	JNZ          f24loop

f24odd:
	TESTQ        $1, CX
	JZ           f24done
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y3
	VSUBPD       32(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y4
	VSUBPD       64(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y5
	VSUBPD       96(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y6
	VSUBPD       128(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y7
	VSUBPD       160(R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8

f24done:
	VADDPD  Y9, Y3, Y3
	VADDPD  Y10, Y4, Y4
	VADDPD  Y11, Y5, Y5
	VADDPD  Y12, Y6, Y6
	VADDPD  Y13, Y7, Y7
	VADDPD  Y14, Y8, Y8
	VSQRTPD Y3, Y3
	VSQRTPD Y4, Y4
	VSQRTPD Y5, Y5
	VSQRTPD Y6, Y6
	VSQRTPD Y7, Y7
	VSQRTPD Y8, Y8
	VMOVUPD Y3, (R8)(R10*1)
	VMOVUPD Y4, 32(R8)(R10*1)
	VMOVUPD Y5, 64(R8)(R10*1)
	VMOVUPD Y6, 96(R8)(R10*1)
	VMOVUPD Y7, 128(R8)(R10*1)
	VMOVUPD Y8, 160(R8)(R10*1)
	ADDQ    $192, R10
	JMP     fnext

f16:
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15
	MOVQ   SI, R11
	LEAQ   (DI)(R10*1), R12
	MOVQ   BX, R13
	TESTQ  R13, R13
	JZ     f16odd

f16loop:
	VBROADCASTSD (R11), Y0
	VBROADCASTSD 8(R11), Y1
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8
	VSUBPD       32(R12), Y0, Y3
	VFMADD231PD  Y3, Y3, Y9
	VSUBPD       64(R12), Y0, Y4
	VFMADD231PD  Y4, Y4, Y10
	VSUBPD       96(R12), Y0, Y5
	VFMADD231PD  Y5, Y5, Y11
	VSUBPD       (R12)(R9*1), Y1, Y2
	VFMADD231PD  Y2, Y2, Y12
	VSUBPD       32(R12)(R9*1), Y1, Y3
	VFMADD231PD  Y3, Y3, Y13
	VSUBPD       64(R12)(R9*1), Y1, Y4
	VFMADD231PD  Y4, Y4, Y14
	VSUBPD       96(R12)(R9*1), Y1, Y5
	VFMADD231PD  Y5, Y5, Y15
	ADDQ         $16, R11
	ADDQ         R9, R12
	ADDQ         R9, R12
	DECQ         R13
	JNZ          f16loop

f16odd:
	TESTQ        $1, CX
	JZ           f16done
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8
	VSUBPD       32(R12), Y0, Y3
	VFMADD231PD  Y3, Y3, Y9
	VSUBPD       64(R12), Y0, Y4
	VFMADD231PD  Y4, Y4, Y10
	VSUBPD       96(R12), Y0, Y5
	VFMADD231PD  Y5, Y5, Y11

f16done:
	VADDPD  Y12, Y8, Y8
	VADDPD  Y13, Y9, Y9
	VADDPD  Y14, Y10, Y10
	VADDPD  Y15, Y11, Y11
	VSQRTPD Y8, Y8
	VSQRTPD Y9, Y9
	VSQRTPD Y10, Y10
	VSQRTPD Y11, Y11
	VMOVUPD Y8, (R8)(R10*1)
	VMOVUPD Y9, 32(R8)(R10*1)
	VMOVUPD Y10, 64(R8)(R10*1)
	VMOVUPD Y11, 96(R8)(R10*1)
	ADDQ    $128, R10
	JMP     fnext

f8:
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	MOVQ   SI, R11
	LEAQ   (DI)(R10*1), R12
	MOVQ   BX, R13
	TESTQ  R13, R13
	JZ     f8odd

f8loop:
	VBROADCASTSD (R11), Y0
	VBROADCASTSD 8(R11), Y1
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8
	VSUBPD       32(R12), Y0, Y3
	VFMADD231PD  Y3, Y3, Y9
	VSUBPD       (R12)(R9*1), Y1, Y4
	VFMADD231PD  Y4, Y4, Y12
	VSUBPD       32(R12)(R9*1), Y1, Y5
	VFMADD231PD  Y5, Y5, Y13
	ADDQ         $16, R11
	ADDQ         R9, R12
	ADDQ         R9, R12
	DECQ         R13
	JNZ          f8loop

f8odd:
	TESTQ        $1, CX
	JZ           f8done
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8
	VSUBPD       32(R12), Y0, Y3
	VFMADD231PD  Y3, Y3, Y9

f8done:
	VADDPD  Y12, Y8, Y8
	VADDPD  Y13, Y9, Y9
	VSQRTPD Y8, Y8
	VSQRTPD Y9, Y9
	VMOVUPD Y8, (R8)(R10*1)
	VMOVUPD Y9, 32(R8)(R10*1)
	ADDQ    $64, R10
	JMP     fnext

f4:
	VXORPD Y8, Y8, Y8
	VXORPD Y12, Y12, Y12
	MOVQ   SI, R11
	LEAQ   (DI)(R10*1), R12
	MOVQ   BX, R13
	TESTQ  R13, R13
	JZ     f4odd

f4loop:
	VBROADCASTSD (R11), Y0
	VBROADCASTSD 8(R11), Y1
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8
	VSUBPD       (R12)(R9*1), Y1, Y4
	VFMADD231PD  Y4, Y4, Y12
	ADDQ         $16, R11
	ADDQ         R9, R12
	ADDQ         R9, R12
	DECQ         R13
	JNZ          f4loop

f4odd:
	TESTQ        $1, CX
	JZ           f4done
	VBROADCASTSD (R11), Y0
	VSUBPD       (R12), Y0, Y2
	VFMADD231PD  Y2, Y2, Y8

f4done:
	VADDPD  Y12, Y8, Y8
	VSQRTPD Y8, Y8
	VMOVUPD Y8, (R8)(R10*1)
	ADDQ    $32, R10
	JMP     fnext

// func rowColMinAVX(base *float64, stride int, ids *int32, n int, r, cm *float64, inf float64)
TEXT ·rowColMinAVX(SB), NOSPLIT, $0-56
	MOVQ         base+0(FP), SI
	MOVQ         stride+8(FP), R9
	MOVQ         ids+16(FP), DI
	MOVQ         n+24(FP), CX
	MOVQ         r+32(FP), R13
	MOVQ         cm+40(FP), R8
	VBROADCASTSD inf+48(FP), Y7
	SHLQ         $3, R9        // R9: bytes per row
	XORQ         AX, AX

cminit:
	VMOVUPD Y7, (R8)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R9
	JLT     cminit
	XORQ    BX, BX

cmrow:
	MOVLQSX (DI)(BX*4), R10
	IMULQ   R9, R10
	ADDQ    SI, R10            // R10: the row of word ids[BX]
	VMOVAPD Y7, Y0
	XORQ    AX, AX

cmk:
	VMOVUPD (R10)(AX*1), Y1
	VMINPD  Y1, Y0, Y0
	VMINPD  (R8)(AX*1), Y1, Y1
	VMOVUPD Y1, (R8)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R9
	JLT     cmk
	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINSD       X1, X0, X0
	VMOVSD       X0, (R13)(BX*8)
	INCQ         BX
	CMPQ         BX, CX
	JLT          cmrow
	VZEROUPPER
	RET

// func rowsDualAVX(base *float64, stride int, ids *int32, n int, sub, rsub, r, cm *float64, inf float64)
TEXT ·rowsDualAVX(SB), NOSPLIT, $0-72
	MOVQ         base+0(FP), SI
	MOVQ         stride+8(FP), R9
	MOVQ         ids+16(FP), DI
	MOVQ         n+24(FP), CX
	MOVQ         sub+32(FP), R11
	MOVQ         rsub+40(FP), R12
	MOVQ         r+48(FP), R13
	MOVQ         cm+56(FP), R8
	VBROADCASTSD inf+64(FP), Y7
	SHLQ         $3, R9        // R9: bytes per row
	XORQ         AX, AX

rdinit:
	VMOVUPD Y7, (R8)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R9
	JLT     rdinit
	XORQ    BX, BX

rdrow:
	MOVLQSX (DI)(BX*4), R14
	MOVQ    R14, R10
	IMULQ   R9, R10
	ADDQ    SI, R10            // R10: the row of word R14 = ids[BX]
	VMOVAPD Y7, Y0
	XORQ    AX, AX

rdmin:
	VMOVUPD (R10)(AX*1), Y2
	VSUBPD  (R11)(AX*1), Y2, Y2
	VMINPD  Y2, Y0, Y0
	ADDQ    $32, AX
	CMPQ    AX, R9
	JLT     rdmin
	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINSD       X1, X0, X0
	VMOVSD       X0, (R13)(BX*8)   // r[BX]
	TESTQ        R12, R12
	JZ           rdown
	VBROADCASTSD (R12)(BX*8), Y3   // s = rsub[BX]
	JMP          rdcols

rdown:
	VBROADCASTSD (R13)(BX*8), Y3   // s = r[BX]

rdcols:
	XORQ AX, AX

rdcol:
	VMOVUPD (R10)(AX*1), Y2
	VSUBPD  Y3, Y2, Y2
	VMINPD  (R8)(AX*1), Y2, Y2
	VMOVUPD Y2, (R8)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, R9
	JLT     rdcol
	INCQ    BX
	CMPQ    BX, CX
	JLT     rdrow
	VZEROUPPER
	RET
