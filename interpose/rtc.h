/*
 * Inside the preload: the runtime compilers, NVRTC and nvJitLink (interpose/rtc.c).
 */
#ifndef JST_INTERPOSE_RTC_H
#define JST_INTERPOSE_RTC_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "hooks.h"

/* The hook of an exact runtime-compiler name (nvrtcCompileProgram,
 * nvJitLinkComplete and its versioned names), or NULL. */
struct jst_hook *jst_rtc_by_name(const char *name);
/* What dlsym returns for h's name, given what the real lookup found (p, not
 * NULL): our dlsym-route wrapper when p is a libnvrtc / libnvJitLink function
 * and wrap is set; never our own export where none would have been found. */
void *jst_rtc_dlsym(struct jst_hook *h, void *handle, void *p, int wrap);

#endif
