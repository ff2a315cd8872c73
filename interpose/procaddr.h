/*
 * Inside the preload: the cuGetProcAddress route (interpose/procaddr.c).
 */
#ifndef JST_INTERPOSE_PROCADDR_H
#define JST_INTERPOSE_PROCADDR_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

/* Maps what the real cuGetProcAddress returned for symbol to our wrapper of
 * that exact variant, or returns fn unchanged when it is not one we know. */
void *jst_procaddr_map(const char *symbol, void *fn);

#endif
