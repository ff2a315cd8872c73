/*
 * Offline symbolization of captured stacks with elfutils (implementation:
 * analyzer/symbolize.c). Uses the module map recorded in the trace.
 */
#ifndef JST_ANALYZER_SYMBOLIZE_H
#define JST_ANALYZER_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

struct jst_frame {
    uint64_t ip;
    const char *module;      /* path of the ELF object, or NULL */
    uint64_t offset;         /* ip - load bias */
    char func[256];          /* demangled; "" when unknown */
    char file[256];          /* "" when no DWARF */
    unsigned line;
    int internal;            /* inside libcuda, libjitstall or the CUDA runtime */
    const char *note;        /* why it could not be symbolized, or NULL */
    int python;              /* a Python frame (func, file, line from the trace) */
    int pylib;               /* Python frame of the stdlib or an installed package */
    int pyglue;              /* native frame of Python's machinery: the interpreter,
                                ctypes/libffi, an extension module, a package's library */
};

struct jst_symbolizer;
/* A symbolizer for process p. Module files stay open for the whole run,
 * shared by the symbolizers of every process that maps the same file, until
 * jst_symbolize_cache_clear(). */
struct jst_symbolizer *jst_symbolizer_new(const struct jst_process *p);
void jst_symbolizer_free(struct jst_symbolizer *s);
void jst_symbolize_cache_clear(void);
/* Module files opened (read for symbols) since the last clear. */
size_t jst_symbolize_files_opened(void);
/* Fills up to max frames of stack id, innermost first; returns the count. */
size_t jst_symbolize_stack(struct jst_symbolizer *s, uint64_t stack_id, uint64_t seq,
                           struct jst_frame *out, size_t max);
/* The first frame that is the program's own (not internal); -1 if none.
 * When that frame is Python's machinery (pyglue), the innermost Python frame
 * of the user's code outward from it (one outside the stdlib and installed
 * packages), else the innermost Python frame there. */
int jst_call_site(const struct jst_frame *f, size_t n);
/* "open_shard (shard.c:42) in /path/prog" into buf. */
const char *jst_frame_str(const struct jst_frame *f, char *buf, size_t n);

#endif
