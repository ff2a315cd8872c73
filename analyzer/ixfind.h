/*
 * Sorted indexes of a process's calls by seq and stacks by id, and the
 * binary searches over them: the model keeps one per process
 * (analyzer/model_index.c), the symbolizer one of its own (it is also built
 * without the model, in tests/unit/test_symbolize.c).
 */
#ifndef JST_ANALYZER_IXFIND_H
#define JST_ANALYZER_IXFIND_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

struct jst_seq_pos {
    uint64_t seq;
    size_t pos;
};

/* The order of every index of positions: by key, then by position, so that
 * equal keys keep the trace's order (qsort is not stable). */
static inline int jst_ix_order(uint64_t kx, uint64_t ky, size_t x, size_t y)
{
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Both indexes of p; each is left NULL when p has nothing to index or
 * memory ran out (the lookups then scan). */
void jst_ix_build(const struct jst_process *p, struct jst_seq_pos **seq_ix, size_t **stack_ix);
/* The index in p->calls of the first call with this seq, or -1. */
long jst_ix_call(const struct jst_process *p, const struct jst_seq_pos *seq_ix, uint64_t seq);
/* The stack with this id, or NULL. */
const struct jst_stack *jst_ix_stack(const struct jst_process *p, const size_t *stack_ix,
                                     uint64_t id);

#endif
