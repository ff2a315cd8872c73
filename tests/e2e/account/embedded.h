/* The embedded image's loader (embedded.c). */
#ifndef JST_ACCT_EMBEDDED_H
#define JST_ACCT_EMBEDDED_H

/* cuInit, device 0's primary context, then cuModuleLoadData of the image in
 * this object's data; returns the CUresult of the load (-1: no device). */
int acct_load_embedded(void);

#endif
