/*
 * Inside the preload: compiler children (interpose/spawn.c).
 */
#ifndef JST_INTERPOSE_CHILDREN_H
#define JST_INTERPOSE_CHILDREN_H

#include <stdint.h>
#include <sys/types.h>

enum {
    JST_CC_NONE = 0,
    JST_CC_PTXAS,
    JST_CC_NVCC,
    JST_CC_CICC,
    JST_CC_NVLINK,
    JST_CC_FATBINARY,
    JST_CC_HOST,
    JST_CC_BUILD, /* any other program a followed process runs (a build tool) */
};

/* Which compiler the program at path is (by its file name), JST_CC_NONE
 * for any other program. Cheap: runs at every exec. */
int jst_compiler_kind(const char *path);
/* In the process about to exec the compiler path (kind from
 * jst_compiler_kind): tells its parent what it runs. Safe after vfork. */
void *jst_spawn_exec_note(int kind, const char *path, char *const argv[]);
/* The exec after jst_spawn_exec_note (which returned slot) failed: the
 * process goes on (a PATH search tries the next directory), forget it. */
void jst_spawn_exec_failed(void *slot);
/* After a posix_spawn(p) of path that started pid (the call began at
 * start_ns): notes a compiler child for the parent's wait. */
void jst_spawn_posix(const char *path, char *const argv[], pid_t pid, uint64_t start_ns);
/* From the constructor: is this process a descendant of a traced one (its
 * marker, or its parent's, in JITSTALL_DIR)? Then it follows its own
 * children too (spawn.c, "descendants"). Only when JITSTALL_DIR is set. */
void jst_spawn_start(void);
/* Does this process (or, after fork or vfork, the process it is a copy of)
 * follow every child, not only compilers? Only reads memory: safe after
 * vfork. */
int jst_spawn_following(void);
/* Marks pid (this process about to exec, or a child posix_spawn started) as
 * a descendant of a traced process: a file in JITSTALL_DIR. System calls
 * only: safe after vfork. */
void jst_spawn_follow_mark(int pid);
/* The trace opened: make the table a fork child can write to. */
void jst_spawn_opened(void);
/* May this thread be running a signal handler? 1 when a signal it blocks
 * has a handler installed (a handler runs with its signal blocked). Only
 * system calls. For exec, which a handler may call: no END record then. */
int jst_handler_running(void);
/* At a hooked driver call (never in a signal handler): writes the records
 * of children that ended in a signal handler, if any. */
void jst_spawn_hooked(void);
/* At the end of the trace (exit, exec): the records still due, children
 * found gone, and a note for those no slot could hold. */
void jst_spawn_flush(void);

/* The compiler children of this process not yet reaped (spawn.c), for the
 * live metrics file: their kinds (JST_CC_*) and start times, at most n;
 * returns the count. Only reads the table. */
size_t jst_spawn_running(unsigned *kind, uint64_t *start, size_t n);

#endif
