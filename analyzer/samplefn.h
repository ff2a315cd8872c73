/*
 * The sampled Python functions of one first call (implementation:
 * analyzer/samplefn.c): the sampler's records name stacks by their innermost
 * frame, "func<TAB>file<TAB>line"; this sums their time by function and file,
 * as a profiler counts them, and keeps the largest. A hash index keeps it
 * linear in the records, however many distinct functions they name.
 *
 *     struct jst_samplefn_acc a;
 *     jst_samplefn_init(&a);
 *     jst_samplefn_add(&a, "load\t/app/m.py\t12", 10000000);   (once per record)
 *     f->n_samples = jst_samplefn_take(&a, &f->samples, 10);  (frees a)
 *
 * The same file holds the one table that names the phase of a framework's
 * first call a sampled stack was in (jst_sample_phase): cache-key hashing,
 * imports, tracing, Inductor's pattern matcher, lowering, Numba's typing,
 * autotuning; by the innermost frame whose function or file a row names.
 */
#ifndef JST_ANALYZER_SAMPLEFN_H
#define JST_ANALYZER_SAMPLEFN_H

#include <stddef.h>
#include <stdint.h>
#include "hashidx.h"

struct jst_sample_fn;

struct jst_samplefn_acc {
    struct jst_hidx ix;
    struct jst_samplefn_ent *v; /* the distinct functions, in the order first seen */
    size_t n, cap;
    size_t oom; /* frames not counted for want of memory */
};

void jst_samplefn_init(struct jst_samplefn_acc *a);
/* Counts ns for the function of frame (NULL: an unknown one, "?"). The frame
 * must stay valid until jst_samplefn_take: its bytes are not copied. */
void jst_samplefn_add(struct jst_samplefn_acc *a, const char *frame, uint64_t ns);
/* The max largest functions (by time, then name and file), as new strings,
 * into *out; returns their count. Frees what a holds. */
size_t jst_samplefn_take(struct jst_samplefn_acc *a, struct jst_sample_fn **out, size_t max);

/* A phase of a first call's sampled Python (first_calls[].phases in JSON). */
enum jst_phase {
    JST_PHASE_OTHER = 0, /* no row names any frame of the stack */
    JST_PHASE_IMPORT,
    JST_PHASE_CACHE_KEY,
    JST_PHASE_TRACE,
    JST_PHASE_PATTERN_MATCHER,
    JST_PHASE_LOWER,
    JST_PHASE_TYPING,
    JST_PHASE_AUTOTUNE,
    JST_PHASE_MAX_
};

const char *jst_phase_name(unsigned phase);  /* "cache_key"; NULL when out of range */
const char *jst_phase_label(unsigned phase); /* "cache-key hashing" */
/* The phase of a sampled stack (frames "func<TAB>file<TAB>line", innermost
 * first): the innermost frame a row of the table names, its index in *at
 * (for JST_PHASE_OTHER, 0). */
unsigned jst_sample_phase(char *const *frames, size_t n, size_t *at);
/* How a report names the function that named a phase: func, but a module's
 * top level ("<module>") by its file's last two parts ("language/core.py"). */
const char *jst_phase_func_words(const char *func, const char *file, char *buf, size_t n);

#endif
