/*
 * CPython's objects as the frame reader needs them, each read through the
 * checked copy and checked before use: str objects (names, file names) as
 * UTF-8, the line tables of 3.10 and of 3.11+, and code objects.
 */
#include <stdio.h>
#include <string.h>

#include "pyint.h"
#include "utf8.h"

/* Text of the str object at obj as UTF-8 into out (cap >= 8), tabs and
 * newlines made spaces. h holds the first have bytes of the object, already
 * read; whatever else is needed is read here. 0, or -1 when obj is no
 * compact str. */
static int py_str(uintptr_t obj, const uint8_t *h, size_t have, char *out, size_t cap)
{
    const struct py_layout *L = jst_py.lay;
    uint8_t hb[80], raw[PY_FILE_MAX + 1];
    if (have < L->ascii_size) {
        if (jst_py_read(hb, obj, L->ascii_size) < 0)
            return -1;
        h = hb;
        have = L->ascii_size;
    }
    uint64_t length;
    uint32_t state;
    memcpy(&length, h + 16, sizeof length);
    memcpy(&state, h + 32, sizeof state);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (py_ptr_at(h, 8) != jst_py.unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
        return -1;
    /* UTF-8 takes at most 1, 2, 3 or 4 bytes for ASCII, UCS1, UCS2, UCS4. */
    size_t room = (cap - 1) / (ascii ? 1 : kind == 1 ? 2 : kind == 2 ? 3 : 4);
    size_t n = length < room ? (size_t)length : room;
    size_t hdr = ascii ? L->ascii_size : L->compact_size;
    const uint8_t *d = h + hdr;
    if (n * kind > sizeof raw)
        return -1;
    if (hdr + n * kind > have) {
        if (n && jst_py_read(raw, obj + hdr, n * kind) < 0)
            return -1;
        d = raw;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = kind == 1   ? d[i]
                     : kind == 2 ? (uint32_t)d[2 * i] | (uint32_t)d[2 * i + 1] << 8
                                 : (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 |
                                       (uint32_t)d[4 * i + 2] << 16 | (uint32_t)d[4 * i + 3] << 24;
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
        if (o + 4 >= cap)
            break; /* only a string whose flags lie gets here */
        o += jst_utf8_put(c, out + o);
    }
    out[o] = '\0';
    return 0;
}

int jst_py_table_open(struct py_table *t, uintptr_t obj, const uint8_t *h, size_t have)
{
    uint8_t hb[32];
    memset(t, 0, sizeof *t);
    if (have < 32) {
        if (jst_py_read(hb, obj, sizeof hb) < 0)
            return -1;
        h = hb;
        have = sizeof hb;
    }
    if (py_ptr_at(h, 8) != jst_py.bytes_type)
        return -1;
    memcpy(&t->size, h + 16, sizeof t->size);
    t->data = obj + 32;
    t->have = have - 32 < sizeof t->head ? have - 32 : sizeof t->head;
    if (t->have > t->size)
        t->have = t->size;
    memcpy(t->head, h + 32, t->have);
    t->cur = t->head;
    return t->size > (1u << 24) ? -1 : 0;
}

void jst_py_table_buffer(struct py_table *t, uint8_t *buf, size_t cap)
{
    t->buf = buf;
    t->cap = cap;
}

/* The byte at t->pos, which is outside the window: reads the window that
 * starts there; -1 at the table's end or when unreadable. */
static __attribute__((noinline)) int py_table_fill(struct py_table *t)
{
    if (t->pos >= t->size)
        return -1;
    uint8_t *dst = t->buf ? t->buf : t->head;
    size_t cap = t->buf ? t->cap : sizeof t->head;
    size_t n = t->size - t->pos < cap ? t->size - t->pos : cap;
    if (jst_py_read(dst, t->data + t->pos, n) < 0)
        return -1;
    t->cur = dst;
    t->off = t->pos;
    t->have = n;
    return t->cur[t->pos++ - t->off];
}

/* The next byte of the table; -1 at its end or when unreadable. */
static inline int py_table_byte(struct py_table *t)
{
    size_t i = t->pos - t->off; /* huge when pos is before the window */
    if (__builtin_expect(i < t->have, 1)) {
        t->pos++;
        return t->cur[i];
    }
    return py_table_fill(t);
}

/* 3.10 line table: (byte delta, signed line delta) pairs; -128: no line. */
static int py_line_310(struct py_table *t, int first, long addr)
{
    long end = 0;
    int line = first;
    for (;;) {
        int sd = py_table_byte(t), ld = py_table_byte(t);
        if (sd < 0 || ld < 0)
            return 0;
        long start = end;
        end += sd;
        int no_line = ld == 0x80;
        if (!no_line)
            line += (int8_t)ld;
        if (start <= addr && addr < end)
            return no_line ? 0 : line;
    }
}

/* A varint of the 3.11+ location table (6 bits per byte, bit 6: more). */
static unsigned py_varint(struct py_table *t)
{
    unsigned v = 0, shift = 0;
    for (int b; (b = py_table_byte(t)) >= 0 && shift < 32; shift += 6) {
        v |= (unsigned)(b & 63) << shift;
        if (!(b & 64))
            break;
    }
    return v;
}

void jst_py_index_reset(struct py_lineidx *ix, uintptr_t code, uintptr_t lt, size_t size)
{
    ix->code = code;
    ix->lt = lt;
    ix->size = size;
    ix->n = 0;
    ix->step = (uint32_t)(size / PY_IDX_MAX + 1 > 4096 ? size / PY_IDX_MAX + 1 : 4096);
}

/* Starts t's walk at the last checkpoint of ix at or before addr. */
static void py_index_seek(struct py_table *t, const struct py_lineidx *ix, long addr, long *end,
                          int *line)
{
    uint32_t lo = 0, hi = ix->n; /* the first checkpoint after addr */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((long)ix->cp[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return;
    t->pos = ix->cp[lo - 1].pos;
    *end = ix->cp[lo - 1].start;
    *line = ix->cp[lo - 1].line;
}

/* 3.11+ location table: entries start with a byte with bit 7 set, code in
 * bits 3-6, length-1 (code units) in bits 0-2; codes 13 and 14 carry a
 * signed line delta, 11 and 12 mean +1 and +2, 15 no location. */
static int py_line_311(struct py_table *t, int first, long addr, struct py_lineidx *ix)
{
    long end = 0;
    int line = first;
    if (ix)
        py_index_seek(t, ix, addr, &end, &line);
    int b = py_table_byte(t);
    while (b >= 0) {
        if (!(b & 0x80))
            return 0;
        size_t at = t->pos - 1;
        if (ix && ix->n < PY_IDX_MAX && at <= UINT32_MAX && end <= (long)UINT32_MAX &&
            (ix->n == 0 ? at >= ix->step : at >= ix->cp[ix->n - 1].pos + (size_t)ix->step)) {
            ix->cp[ix->n].pos = (uint32_t)at;
            ix->cp[ix->n].start = (uint32_t)end;
            ix->cp[ix->n].line = line;
            ix->n++;
        }
        unsigned code = (b >> 3) & 15;
        long start = end;
        end += ((b & 7) + 1) * 2;
        if (code == 13 || code == 14) {
            unsigned u = py_varint(t);
            line += (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (code == 11 || code == 12) {
            line += (int)code - 10;
        }
        if (start <= addr && addr < end)
            return code == 15 ? 0 : line;
        while ((b = py_table_byte(t)) >= 0 && !(b & 0x80))
            ;
    }
    return 0;
}

/* The three objects in one read when possible. */
int jst_py_names(const uint8_t *co, char *text, size_t cap, struct py_table *t)
{
    const struct py_layout *L = jst_py.lay;
    uintptr_t q = py_ptr_at(co, L->co_qualname), f = py_ptr_at(co, L->co_filename);
    uintptr_t lt = py_ptr_at(co, L->co_linetable);
    uint8_t bq[72 + PY_SPEC], bf[72 + PY_SPEC], bl[32 + PY_SPEC];
    size_t nq = L->compact_size + PY_SPEC, nf = nq, nl = 32 + PY_SPEC;
    struct iovec loc[3] = {{bq, nq}, {bf, nf}, {bl, nl}};
    struct iovec rem[3] = {{(void *)q, nq}, {(void *)f, nf}, {(void *)lt, nl}};
    if (!q || !f || !lt)
        return -1;
    /* Near the end of a mapping the speculative read fails: then each object
     * reads exactly what it needs. */
    if (jst_py_copyv(loc, rem, 3) != (ssize_t)(nq + nf + nl))
        nq = nf = nl = 0;
    char func[PY_FUNC_MAX + 1], file[PY_FILE_MAX + 1];
    if (py_str(q, bq, nq, func, sizeof func) < 0 || py_str(f, bf, nf, file, sizeof file) < 0 ||
        jst_py_table_open(t, lt, bl, nl) < 0)
        return -1;
    snprintf(text, cap, "%s\t%s", func, file);
    return 0;
}

int jst_py_code(uintptr_t code, uint8_t *co, size_t cap)
{
    const struct py_layout *L = jst_py.lay;
    size_t n = L->co_code ? L->co_code : L->co_linetable + 8;
    if (n > cap || jst_py_read(co, code, n) < 0)
        return -1;
    return py_ptr_at(co, 8) == jst_py.code_type ? 0 : -1;
}

int jst_py_line(struct py_table *t, int first, long addr, struct py_lineidx *ix)
{
    if (addr < 0)
        return first;
    return jst_py.lay->minor == 10 ? py_line_310(t, first, addr) : py_line_311(t, first, addr, ix);
}
