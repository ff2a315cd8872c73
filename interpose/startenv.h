/*
 * Inside the preload: what the process started with (interpose/startenv.c):
 * this library's path, the LD_PRELOAD and JITSTALL_DIR entries that the exec
 * wrappers put back, and adding an entry to the environment without malloc.
 */
#ifndef JST_INTERPOSE_STARTENV_H
#define JST_INTERPOSE_STARTENV_H

/* Called once by the constructor: keeps the values below. */
void jst_startenv_save(void);
/* This library's path (absolute), "" if unknown. */
const char *jst_self_path(void);
/* "LD_PRELOAD=..." and "JITSTALL_DIR=..." as the process started, "" if unset. */
const char *jst_start_preload(void);
const char *jst_start_dir(void);
/* The identity of descriptor 2 as the process started (what jitstall's
 * messages may be written to: jst_say), NULL when it was not open. */
#include <sys/types.h>
struct jst_file_id {
    dev_t dev;
    ino_t ino;
};
const struct jst_file_id *jst_start_stderr(void);
/* Adds "name=value" to the environment (name must not be set); the entry
 * is ours for good. Returns it, or NULL if it did not fit. */
const char *jst_env_add(const char *name, const char *value);

#endif
