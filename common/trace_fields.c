/*
 * A trace record's fields: iteration over the payload, and the first field
 * of a key. Every length is checked against the payload before use; a field
 * that runs past it ends the iteration and marks it bad.
 */
#include "trace_read_int.h"

void jst_fields_begin(struct jst_field_iter *it, const struct jst_record *rec)
{
    it->p = rec->payload;
    it->end = rec->payload + rec->len;
    it->bad = 0;
}

int jst_fields_next(struct jst_field_iter *it, struct jst_field *f)
{
    if (it->bad || it->p >= it->end)
        return 0;
    size_t left = (size_t)(it->end - it->p);
    if (left < 3) {
        it->bad = 1;
        return 0;
    }
    f->key = jst_rd_u16(it->p);
    f->kind = it->p[2];
    f->u64 = 0;
    f->data = NULL;
    f->len = 0;
    left -= 3;
    const uint8_t *v = it->p + 3;
    switch (f->kind) {
    case JST_K_U64:
    case JST_K_I64:
        if (left < 8) {
            it->bad = 1;
            return 0;
        }
        f->u64 = jst_rd_u64(v);
        it->p = v + 8;
        return 1;
    case JST_K_STR:
    case JST_K_BYTES: {
        if (left < 4) {
            it->bad = 1;
            return 0;
        }
        uint32_t n = jst_rd_u32(v);
        if (n > left - 4) {
            it->bad = 1;
            return 0;
        }
        f->data = v + 4;
        f->len = n;
        it->p = v + 4 + n;
        return 1;
    }
    default:
        /* An unknown kind has no known size, so nothing after it can be found. */
        it->bad = 1;
        return 0;
    }
}

/* The first field with key whose kind is a number (num) or text (!num). */
static int rec_find(const struct jst_record *rec, uint16_t key, int num, struct jst_field *f)
{
    struct jst_field_iter it;
    jst_fields_begin(&it, rec);
    while (jst_fields_next(&it, f)) {
        int is_num = f->kind == JST_K_U64 || f->kind == JST_K_I64;
        int is_text = f->kind == JST_K_STR || f->kind == JST_K_BYTES;
        if (f->key == key && (num ? is_num : is_text))
            return 1;
    }
    return 0;
}

int jst_rec_get_u64(const struct jst_record *rec, uint16_t key, uint64_t *out)
{
    struct jst_field f;
    if (!rec_find(rec, key, 1, &f))
        return 0;
    *out = f.u64;
    return 1;
}

int jst_rec_get_str(const struct jst_record *rec, uint16_t key, const char **s, uint32_t *len)
{
    struct jst_field f;
    if (!rec_find(rec, key, 0, &f))
        return 0;
    *s = (const char *)f.data;
    *len = f.len;
    return 1;
}
