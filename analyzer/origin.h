/*
 * Where the PTX of a JIT load came from (implementation: analyzer/origin.c),
 * so that its fix fits: a fatbin in an ELF object the user builds, a fatbin
 * or .ptx file, PTX text in a program's data, PTX that NVRTC made at run time,
 * or a third-party library (a wheel, a conda env, a system or CUDA toolkit
 * directory), with the package that ships it when that can be found.
 */
#ifndef JST_ANALYZER_ORIGIN_H
#define JST_ANALYZER_ORIGIN_H

#include <stddef.h>
#include "model.h"

enum jst_origin_kind {
    JST_ORIGIN_UNKNOWN = 0,
    JST_ORIGIN_ELF,         /* a fatbin inside an ELF object the user builds (nvcc) */
    JST_ORIGIN_FATBIN_FILE, /* a fatbin or cubin file: by path, or read into memory */
    JST_ORIGIN_PTX_FILE,    /* a .ptx file: by path, or PTX text read into memory */
    JST_ORIGIN_PTX_DATA,    /* PTX text held in an ELF object's data */
    JST_ORIGIN_NVRTC,       /* PTX in memory after the process ran NVRTC */
    JST_ORIGIN_THIRD_PARTY, /* an object or file under a directory the user does not build */
};

struct jst_origin {
    unsigned kind;      /* enum jst_origin_kind */
    const char *object; /* the ELF object or file, or NULL (memory) */
    char package[160];  /* "nvidia_cudnn_cu13 9.13.0" (wheel) or "libfoo1 (dpkg)"; "" */
    const char *where;  /* third party: "a Python package", "a conda env", ... */
    char py_file[1024]; /* a load made from Python through an FFI: the caller's file */
};

/* Decides where load c of process p got its image. */
void jst_origin_of(const struct jst_process *p, const struct jst_call_ev *c, struct jst_origin *o);

/* The kind of directory a path lies in when it is third-party ("a Python
 * package", "a conda environment", "a system library directory", "a system
 * program directory", "the CUDA toolkit"), else NULL. */
const char *jst_origin_third_party(const char *path);

/* The package that installed path: a wheel whose *.dist-info/RECORD lists it,
 * else a conda package whose conda-meta record lists it, else a Debian
 * package whose dpkg list names it (the dpkg info directory is
 * $JITSTALL_DPKG_DIR, default /var/lib/dpkg/info). Writes "" when none. */
void jst_origin_package(const char *path, char *out, size_t n);

/* Names the file each load of an image in memory was read from, when the
 * analyzer can find a file with the same bytes among those the trace points
 * at (the program's arguments and working directory, the directories they
 * name, the Python code's directory): jst_call_ev.read_from. A name is only
 * given on a content match. */
void jst_origin_name_files(struct jst_process *p);

/* Frees the lookups jst_origin_of builds for p on first use (the model's
 * jst_model_index_free calls it). */
void jst_origin_ix_free(struct jst_process *p);

#endif
