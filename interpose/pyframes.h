/*
 * Python frames of the calling thread, read from CPython's own frame chain at
 * a recorded event (implementation: interpose/pyframes.c, with pyread.c,
 * pylayout.c and pycode.c; their shared header is pyint.h).
 */
#ifndef JST_INTERPOSE_PYFRAMES_H
#define JST_INTERPOSE_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>

/* At most this many Python frames (the innermost) per stack, and this many
 * bytes of "func\tfile\tline" text in all. */
#define JST_PY_MAX_FRAMES 128
#define JST_PY_BUF 24576

/* The Python frames of one stack, innermost first, packed so that two
 * captures compare with memcmp: per frame a u32 native index (the position in
 * the stack's ips of the interpreter eval frame running it, or the number of
 * ips when that eval frame lies beyond the captured native stack), a u16 text
 * length, then the text "func\tfile\tline" (no NUL). */
struct jst_pyframes {
    size_t n;   /* frames */
    size_t len; /* bytes used in buf */
    uint8_t buf[JST_PY_BUF];
};

/* Quick test, no lock: 1 when a CPython interpreter may have frames to read
 * (so a capture is worth a buffer), 0 when Python is off or not supported. */
int jst_py_maybe(void);
/* Fills py with the calling thread's Python frames for the native stack
 * ips[0..n_ips); py->n is 0 when the thread runs no Python code, when
 * JITSTALL_PYTHON=0, or when the interpreter's layout is not one jitstall
 * knows (a note in the trace says so, once). Never takes the GIL, never
 * creates Python objects, reads memory only through a checked copy. */
void jst_py_capture(const uint64_t *ips, size_t n_ips, struct jst_pyframes *py);

/* The calling thread's Python thread state (an address), 0 when it runs no
 * Python or frames cannot be read; for jst_py_sample from another thread. */
uintptr_t jst_py_self_state(void);
/* Another thread's Python frames (thread state ts of the thread whose
 * pthread_self() is thread_id), the innermost max at most, with no native
 * stack (every native index 0). The thread runs on meanwhile: a chain that
 * does not check out gives py->n 0, silently. */
void jst_py_sample(uintptr_t ts, unsigned long thread_id, struct jst_pyframes *py, size_t max);
/* In a forked child (from the sampler's fork handler): locks a fork may have
 * left held are freed, and the reader's descriptor is renewed at first use. */
void jst_py_atfork_child(void);

#endif
