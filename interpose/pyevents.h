/*
 * Framework events (interpose/pyevents.c): listeners on what Triton,
 * PyTorch, JAX and Numba publish about their compiles, set up through a
 * Python audit hook.
 */
#ifndef JST_INTERPOSE_PYEVENTS_H
#define JST_INTERPOSE_PYEVENTS_H

/* The interpreter looked up an extension module's PyInit_ function (the
 * dlsym wrapper): adds the audit hook once, when Python is initialized and
 * this thread holds the GIL. */
void jst_pyevents_arm(void);
/* A trace file was opened: the notes the set-up wrote so far go into it. */
void jst_pyevents_opened(void);

#endif
