/*
 * The launch path after a function's first launch, on aarch64: the same
 * stubs as launch_x86_64.S (which says what they do and why they are not C),
 * with the same table, hash and probe order: the exported cuLaunchKernel,
 * cuLaunchKernel_ptsz, cuLaunchKernelEx, cuLaunchKernelEx_ptsz and their
 * dlsym (jst_l_*) and cuGetProcAddress (jst_p_*) wrappers.
 *
 * A stub uses only x9-x11 and x16-x17 (scratch at a call; x8, the indirect
 * result register, is left alone), never touches the stack (cuLaunchKernel's
 * last three arguments are there) and leaves x30 as the caller set it, so
 * the driver returns straight to the program. The table pointer is loaded
 * plainly: the slot load depends on it by address, which orders the two on
 * Arm as the acquire in launch.h's C does.
 *
 * jst_launch_real holds the real pointers: [2*i] for the exported and
 * cuGetProcAddress routes, [2*i+1] for dlsym, i = 0..3 in the order above.
 */
#include "launch_seen.h"

#ifndef JST_NO_ASM

/* With branch protection on, every indirect branch target starts with a
 * landing pad, and the object says so in its GNU property note. */
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define JST_BTI bti c
#define JST_PROP_BTI 1
#else
#define JST_BTI
#define JST_PROP_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT
#define JST_PROP_PAC 2
#else
#define JST_PROP_PAC 0
#endif

/* name: the symbol; idx: its jst_launch_real slot; freg: the register that
 * holds the CUfunction (x0 for cuLaunchKernel, x1 for cuLaunchKernelEx);
 * vis: .globl for exports, .hidden for the others. */
.macro jst_launch name, idx, freg, vis
    .text
    .globl \name
    \vis \name
    .type \name, %function
    .p2align 4
\name:
    .cfi_startproc
    JST_BTI
    adrp x16, jst_launch_real+(\idx)*8
    ldr x16, [x16, #:lo12:jst_launch_real+(\idx)*8]
    cbz x16, 2f
    ldr x17, 4f
    mul x17, \freg, x17
    lsr x17, x17, #(64-JST_SEEN_BITS)
    adrp x9, jst_seen_tab
1:  ldr x10, [x9, #:lo12:jst_seen_tab]
    ldr x11, [x10, x17, lsl #3]
    cmp x11, \freg
    b.ne 3f
    br x16
3:  cbz x11, 2f
    add w17, w17, #1
    and w17, w17, #((1<<JST_SEEN_BITS)-1)
    b 1b
2:  b jst_slow_\name
    .p2align 3
4:  .quad 0x9E3779B97F4A7C15
    .cfi_endproc
    .size \name, .-\name
.endm

/* The three stubs of variant v: exported, for dlsym (jst_l_) and for
 * cuGetProcAddress (jst_p_); idx: the slot of the exported and
 * cuGetProcAddress routes, idx+1 dlsym's. */
.macro jst_launch3 v, idx, freg
jst_launch \v, \idx, \freg, .globl
jst_launch jst_l_\v, (\idx+1), \freg, .hidden
jst_launch jst_p_\v, \idx, \freg, .hidden
.endm

jst_launch3 cuLaunchKernel, 0, x0
jst_launch3 cuLaunchKernel_ptsz, 2, x0
jst_launch3 cuLaunchKernelEx, 4, x1
jst_launch3 cuLaunchKernelEx_ptsz, 6, x1

#endif

    .section .note.GNU-stack,"",%progbits

#if JST_PROP_BTI || JST_PROP_PAC
    .pushsection .note.gnu.property, "a"
    .p2align 3
    .word 4
    .word 16
    .word 5 /* NT_GNU_PROPERTY_TYPE_0 */
    .asciz "GNU"
    .word 0xc0000000 /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
    .word 4
    .word (JST_PROP_BTI | JST_PROP_PAC)
    .word 0
    .popsection
#endif
