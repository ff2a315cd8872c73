/*
 * An index of a process's module map (implementation: analyzer/modix.c): which
 * mapping holds an address, in O(log n) however many mappings overlap, so
 * that a hostile trace of many overlapping maps and a deep stack cannot make
 * symbolizing or origin-finding quadratic. Built from the map alone, so the
 * symbolizer (also built without the model, in tests/unit) can use it.
 */
#ifndef JST_ANALYZER_MODIX_H
#define JST_ANALYZER_MODIX_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

struct jst_modix;

/* The index of mods[0..n) (entries that are not dlclose events and have a
 * path); NULL when out of memory (callers then answer "not found"). */
struct jst_modix *jst_modix_build(const struct jst_modmap *mods, size_t n);
void jst_modix_free(struct jst_modix *x);

/* The latest entry (highest position) whose range holds ip, or -1. */
long jst_modix_latest(const struct jst_modix *x, uint64_t ip);

/* The latest entry holding ip that was mapped when call k was made: recorded
 * at or before k (seq_after <= k) and not closed by a later dlclose entry of
 * the same path and bias at or before k. When none is (or k < 0), the
 * latest entry holding ip; -1 when no entry holds it. */
long jst_modix_at(const struct jst_modix *x, uint64_t ip, long k);

/* Entries looked at by the queries so far (for the scale tests' count). */
uint64_t jst_modix_steps(void);

#endif
