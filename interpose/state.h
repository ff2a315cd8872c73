/*
 * The core of the preload that every file shares: tracing state, the
 * recursion guard, and the sink's records (interpose/sink.c). Each other
 * part has a header of its own (real.h, hooks.h, event.h, load.h, launch.h,
 * inflight.h, rtc.h, nvtx.h, procaddr.h, argv.h, ...). Nothing here is
 * exported from libjitstall.so.
 */
#ifndef JST_INTERPOSE_STATE_H
#define JST_INTERPOSE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

#include "trace.h"

#define JST_EXPORT __attribute__((visibility("default")))
#define JST_LIKELY(x) __builtin_expect(!!(x), 1)
#define JST_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For code that may run while a sanitizer runtime in the program is still
 * starting (dlsym.c): no instrumentation in a sanitized build of jitstall. */
#define JST_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

/* ---- sink.c: state, trace file, records (init.c: exit, exec, fork) ---- */

/* Tracing state. OFF is final (JITSTALL_DISABLE=1 or a failure). */
enum { JST_ST_NEW = 0, JST_ST_OPENING = 1, JST_ST_ON = 2, JST_ST_OFF = 3 };
extern _Atomic int jst_state;
/* For the few variables the constructor writes in every process: placed in
 * .data, whose page the loader has written already (relocations), instead
 * of a .bss page each (docs/PERFORMANCE.md, "Idle cost"). */
#define JST_START_DATA __attribute__((section(".data.jst_start")))
/* The constant strings of that code (getenv's names), next to those
 * variables instead of on a page of .rodata of their own. */
#define JST_START_RODATA __attribute__((section(".data.jst_start_str")))
/* The code that every process runs (constructor, exit, the exec and dlsym
 * wrappers): the linker places .text.startup.* at the start of .text, within
 * the first 64 KiB of the file, which the kernel maps in with the ELF
 * headers and symbol tables the loader reads anyway (one fault for all),
 * instead of scattered over .text at a page fault per function
 * (docs/PERFORMANCE.md, "Idle cost"). */
#define JST_IDLE_TEXT __attribute__((section(".text.startup.jst_idle")))
extern int jst_debug_on;

/* Recursion guard in initial-exec TLS: touching it never calls malloc. Set
 * while a hook does its own work and while it runs the real function, so
 * driver-internal calls that come back through our exports pass straight on. */
extern __thread int jst_guard __attribute__((tls_model("initial-exec")));

/* A secure-execution process (AT_SECURE: setuid, setgid, capabilities): the
 * preload then traces nothing and reads no JITSTALL_* variable. */
int jst_secure_exec(void);
/* Reads the configuration once (thread-safe, lock-free for the fast case).
 * Returns 1 if tracing may happen in this process, 0 when disabled. */
int jst_config(void);
/* The part the constructor needs (secure execution, JITSTALL_DISABLE,
 * JITSTALL_DEBUG), without reading the rest: 1 if tracing may happen. */
int jst_config_early(void);
/* The writer for this process, opening the trace file on first use (and again
 * in a forked child). NULL when tracing is off. */
struct jst_writer *jst_trace(void);
/* Appends a record to the trace; failures turn tracing off. */
int jst_emit(const struct jst_rec *r, int flush);
/* Before an exec: ends the trace with END "exec" (exec_path: path) when this
 * process owns an open trace. 1 if it did. */
int jst_exec_end(const char *path);
/* The exec after jst_exec_end() returned 1 failed with err: the process goes
 * on, traced into a new file that names the old one in a note. */
void jst_exec_failed(const char *path, int err);
/* Turns tracing off for good, with one line on stderr. */
void jst_disable(const char *reason);
/* write(2) of all n bytes to fd, again after EINTR; stops at an error. */
void jst_write_all(int fd, const char *s, size_t n);
/* The one way jitstall writes to stderr: n bytes of s to descriptor 2, only
 * when it is still the file it was at start (a daemon that closed it may
 * have opened its own file under that number); else nothing. */
void jst_say(const char *s, size_t n);
/* The loaded object that holds addr (dladdr1), or NULL. */
struct link_map;
struct link_map *jst_object_of(const void *addr);
/* The definition of name in the loaded object l itself, not in the objects
 * it depends on; NULL when it has none (dlsym.c). */
void *jst_object_sym(struct link_map *l, const char *name);
/* A note record in the trace: a message from jitstall itself (level 0 info, 1 warning). */
void jst_note(int level, const char *msg);
/* Debug line to stderr when JITSTALL_DEBUG=1 (stack buffer + write(2)). */
void jst_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t jst_now_ns(void); /* CLOCK_MONOTONIC */
uint64_t jst_next_seq(void);
uint32_t jst_tid(void);
/* The executable's path (readlink /proc/self/exe), "" if unknown. */
const char *jst_exe_path(void);

#endif
