/*
 * Inside the preload: running a wrapper's work on a stack of its own when
 * the program's thread has little left (interpose/bigstack.c).
 */
#ifndef JST_INTERPOSE_BIGSTACK_H
#define JST_INTERPOSE_BIGSTACK_H

/* Flags of jst_big_stack_call. */
enum {
    JST_BIG_MUST_RUN = 1,  /* run fn directly when no stack can be mapped */
    JST_BIG_OWN_STACK = 2, /* fn captures the caller's stack: switch only when it is small */
};

/* Runs fn(arg) on the calling thread: directly on a main thread (and a
 * vfork child), or on a stack from here already; on any other thread, on a
 * stack mapped for the call and unmapped after, unless flags has
 * JST_BIG_OWN_STACK and the thread has at least 64 KiB of stack left.
 * Returns 1 when fn ran; when no stack can be mapped, fn runs directly if the
 * thread has 64 KiB left or flags has JST_BIG_MUST_RUN, and else not at all
 * (returns 0). */
int jst_big_stack_call(void (*fn)(void *), void *arg, int flags);

#endif
