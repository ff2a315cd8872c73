/*
 * Classifying the frames of a stack (analyzer/symclass.c): which modules,
 * files and functions are plumbing (jitstall, the driver, the CUDA runtime,
 * Python's machinery) rather than the program's own code. The symbolizer
 * (symbolize.c) marks frames with these; jst_call_site then picks the caller.
 */
#ifndef JST_ANALYZER_SYMCLASS_H
#define JST_ANALYZER_SYMCLASS_H

#include <stddef.h>
#include "symbolize.h"

/* Why a frame has no function name (struct jst_frame's note). */
#define SYM_NOTE_UNKNOWN "unknown module"
#define SYM_NOTE_NOSYMS "no symbols"

/* The file name of path, after its last '/'. */
const char *jst_sym_base(const char *path);
/* libcuda* (the driver, libcudart, libcudadebugger), the PTX JIT compiler
 * and jitstall. */
int jst_sym_internal_path(const char *path);
/* The Python interpreter (libpython*, python, python3.N). */
int jst_sym_python_path(const char *path);
/* Native code running Python's machinery: ctypes, libffi, extension modules,
 * libraries of installed packages. */
int jst_sym_pyglue_path(const char *path);
/* A Python file of the standard library or an installed package. */
int jst_sym_pylib_file(const char *file);
/* Python's standard library only (installed packages are not). */
int jst_sym_pystd_file(const char *file);
/* The CUDA runtime linked statically, the toolkit's launch helpers and the
 * stubs nvcc generates. */
int jst_sym_internal_func(const char *func, const char *file);
/* Marks the host function nvcc makes for a kernel launch as plumbing. */
void jst_sym_mark_kernel_stubs(struct jst_frame *f, size_t n);

#endif
