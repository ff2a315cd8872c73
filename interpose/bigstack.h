/*
 * Inside the preload: running a wrapper's work on a stack of its own when
 * the program's thread has little left (interpose/bigstack.c).
 */
#ifndef JST_INTERPOSE_BIGSTACK_H
#define JST_INTERPOSE_BIGSTACK_H

/* Runs fn(arg) on the calling thread: directly when it has at least 64 KiB
 * of stack left (or is a main thread, or is already on a stack from here),
 * else on a stack mapped for the call and unmapped after. Returns 1 when fn
 * ran; 0 when the stack was small and no stack could be mapped: then fn ran
 * directly if must_run, else not at all. */
int jst_big_stack_call(void (*fn)(void *), void *arg, int must_run);

#endif
