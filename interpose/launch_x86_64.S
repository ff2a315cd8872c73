/*
 * The launch path after a function's first launch, on x86-64: the exported
 * cuLaunchKernel, cuLaunchKernel_ptsz, cuLaunchKernelEx, cuLaunchKernelEx_ptsz
 * and their dlsym (jst_l_*) and cuGetProcAddress (jst_p_*) wrappers.
 *
 * Each stub looks the CUfunction up in the first-launch set (jst_seen_tab, an
 * open-addressing table of JST_SEEN_SIZE slots, Fibonacci hashing, linear
 * probing; launch.c keeps it) and, when it is there, tail-jumps to the real
 * function with every argument untouched. A function not yet seen, or a real
 * pointer not yet resolved, goes to jst_slow_<name> (interpose/hooks_launch.c),
 * which records the first launch. Written here rather than in C because GCC
 * reloads and stores back every stack argument of a tail call (cuLaunchKernel
 * has five), which doubles the cost of the path. It adds about a dozen
 * instructions per launch (docs/PERFORMANCE.md).
 *
 * jst_launch_real holds the real pointers: [2*i] for the exported and
 * cuGetProcAddress routes, [2*i+1] for dlsym, i = 0..3 in the order above.
 */
#include "launch_seen.h"

#ifndef JST_NO_ASM

/* name: the symbol; idx: its jst_launch_real slot; freg: the register that
 * holds the CUfunction (%rdi for cuLaunchKernel, %rsi for cuLaunchKernelEx);
 * vis: .globl for exports, .hidden for the others. */
.macro jst_launch name, idx, freg, vis
    .text
    .globl \name
    \vis \name
    .type \name, @function
    .p2align 4
\name:
    .cfi_startproc
    movq jst_launch_real+(\idx)*8(%rip), %rax
    testq %rax, %rax
    jz 2f
    movabsq $0x9E3779B97F4A7C15, %r10
    imulq \freg, %r10
    shrq $(64-JST_SEEN_BITS), %r10
1:  movq jst_seen_tab(%rip), %r11
    movq (%r11,%r10,8), %r11
    cmpq %r11, \freg
    jne 3f
    jmp *%rax
3:  testq %r11, %r11
    jz 2f
    addl $1, %r10d
    andl $((1<<JST_SEEN_BITS)-1), %r10d
    jmp 1b
2:  jmp jst_slow_\name
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

jst_launch3 cuLaunchKernel, 0, %rdi
jst_launch3 cuLaunchKernel_ptsz, 2, %rdi
jst_launch3 cuLaunchKernelEx, 4, %rsi
jst_launch3 cuLaunchKernelEx_ptsz, 6, %rsi

#endif

    .section .note.GNU-stack,"",@progbits
