/*
 * Inside the preload: the frameworks' compile caches (interpose/fwcache.c).
 */
#ifndef JST_INTERPOSE_FWCACHE_H
#define JST_INTERPOSE_FWCACHE_H

/* Writes the FW_CACHE records, the first time only (the trace must be open
 * or opening on this thread). */
void jst_fwcache_once(void);
/* 1 when this process runs an initialized Python interpreter. */
int jst_fwcache_python(void);

#endif
