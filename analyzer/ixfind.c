/* Sorted indexes by seq and by stack id, and their binary searches. */
#include "ixfind.h"

#include <stdlib.h>

static int ix_cmp_seq(const void *a, const void *b)
{
    const struct jst_seq_pos *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* qsort has no context argument: the stacks being sorted. */
static const struct jst_stack *ix_stacks;

static int ix_cmp_stack(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return jst_ix_order(ix_stacks[x].id, ix_stacks[y].id, x, y);
}

void jst_ix_build(const struct jst_process *p, struct jst_seq_pos **seq_ix, size_t **stack_ix)
{
    *seq_ix = NULL;
    *stack_ix = NULL;
    if (p->n_calls && (*seq_ix = malloc(p->n_calls * sizeof **seq_ix)) != NULL) {
        for (size_t i = 0; i < p->n_calls; i++)
            (*seq_ix)[i] = (struct jst_seq_pos){p->calls[i].seq, i};
        qsort(*seq_ix, p->n_calls, sizeof **seq_ix, ix_cmp_seq);
    }
    if (p->n_stacks && (*stack_ix = malloc(p->n_stacks * sizeof **stack_ix)) != NULL) {
        for (size_t i = 0; i < p->n_stacks; i++)
            (*stack_ix)[i] = i;
        ix_stacks = p->stacks;
        qsort(*stack_ix, p->n_stacks, sizeof **stack_ix, ix_cmp_stack);
        ix_stacks = NULL;
    }
}

long jst_ix_call(const struct jst_process *p, const struct jst_seq_pos *seq_ix, uint64_t seq)
{
    if (!seq_ix) { /* not built (out of memory): scan */
        for (size_t i = 0; i < p->n_calls; i++)
            if (p->calls[i].seq == seq)
                return (long)i;
        return -1;
    }
    size_t lo = 0, hi = p->n_calls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (seq_ix[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_calls && seq_ix[lo].seq == seq ? (long)seq_ix[lo].pos : -1;
}

const struct jst_stack *jst_ix_stack(const struct jst_process *p, const size_t *stack_ix,
                                     uint64_t id)
{
    if (!stack_ix) {
        for (size_t i = 0; i < p->n_stacks; i++)
            if (p->stacks[i].id == id)
                return &p->stacks[i];
        return NULL;
    }
    size_t lo = 0, hi = p->n_stacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->stacks[stack_ix[mid]].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_stacks && p->stacks[stack_ix[lo]].id == id ? &p->stacks[stack_ix[lo]] : NULL;
}
