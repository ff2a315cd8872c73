/*
 * Names of CUDA driver results (implementation: analyzer/curesult.c, from
 * cuda.h's CUresult enum).
 */
#ifndef JST_ANALYZER_CURESULT_H
#define JST_ANALYZER_CURESULT_H

#include <stddef.h>

#define JST_CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222

/* "CUDA_ERROR_INVALID_IMAGE" for 200; NULL for a value cuda.h does not name. */
const char *jst_curesult_name(long long r);
/* "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)", or "CUresult 12345" when
 * unnamed; returns buf. */
const char *jst_curesult_str(char *buf, size_t n, long long r);

#endif
