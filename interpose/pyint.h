/*
 * Inside the preload's Python frame reader, shared by its parts: the checked
 * copy (pyread.c), the interpreter found and its layout
 * checked (pylayout.c), CPython's strings and line tables (pycode.c), and
 * the walk over the frame chain (pyframes.c).
 */
#ifndef JST_INTERPOSE_PYINT_H
#define JST_INTERPOSE_PYINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>

#define PY_FUNC_MAX 200
#define PY_FILE_MAX 512
/* Bytes read past an object's header on the first try, in the hope that
 * the text or table is there too (saves a read: each costs a system call). */
#define PY_SPEC 512

/* Where CPython keeps what we read, for one minor version (offsets in bytes,
 * measured with offsetof against that version's headers). */
struct py_layout {
    unsigned minor;
    unsigned ts_thread_id; /* PyThreadState.thread_id */
    unsigned ts_frame;     /* .frame (3.10), .cframe (3.11, 3.12), .current_frame (3.13) */
    int cf_current;        /* _PyCFrame.current_frame; -1: ts_frame is the frame */
    int frame_object;      /* 3.10: frames are PyFrameObjects with an int f_lasti */
    unsigned fr_code, fr_prev, fr_instr;
    int fr_owner, fr_entry; /* -1: no such field */
    unsigned co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
    unsigned co_code, co_firsttraceable; /* 3.11+: instructions, first traceable one */
    unsigned ascii_size, compact_size;   /* sizeof PyASCIIObject, PyCompactUnicodeObject */
};

/* The interpreter of this process, once jst_py_thread() found it readable. */
struct py_interp {
    const struct py_layout *lay;
    uintptr_t code_type, unicode_type, bytes_type, frame_type; /* CPython's type objects */
    uintptr_t eval_lo, eval_hi;                                /* _PyEval_EvalFrameDefault's code */
};
extern struct py_interp jst_py;

/* pyread.c: every read of the interpreter's memory. */
/* Copies rem[0..n) into loc[0..n), in order; returns the bytes copied before
 * the first unreadable one (0 or less: none). */
ssize_t jst_py_copyv(const struct iovec *loc, const struct iovec *rem, int n);
/* Copies n bytes at addr into dst; 0, or -1 when any of them is unreadable. */
int jst_py_read(void *dst, uintptr_t addr, size_t n);
/* 0 once reads cannot be done any more (no /proc/self/mem, or the program
 * took the descriptor): then nothing is tried. */
int jst_py_read_ok(void);
/* Reads done so far (system calls). */
unsigned long long jst_py_reads(void);
/* In a forked child: its first read takes a descriptor on its own memory. */
void jst_py_read_atfork_child(void);

/* Fields of an object already copied into b. */
static inline uintptr_t py_ptr_at(const uint8_t *b, unsigned off)
{
    uintptr_t v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static inline int py_int_at(const uint8_t *b, unsigned off)
{
    int v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

/* pylayout.c */
/* The calling thread's thread state, 0 when it has none or the interpreter
 * cannot be read (found on first use; a note says why, once). */
uintptr_t jst_py_thread(void);
/* Says once per process that frames could not be read after all. */
void jst_py_note_bad(const char *what);

/* pycode.c */
/* Reads a code object's line table (a bytes object) piecewise: the first
 * bytes come with the object's header, the rest in windows of up to cap
 * bytes into buf (a caller's buffer; none: windows of PY_SPEC bytes into
 * head). A table of 300,000 lines is about 2 MB. */
struct py_table {
    uintptr_t data;
    size_t size, pos, have, off;
    const uint8_t *cur; /* have bytes of the table from off */
    uint8_t *buf;
    size_t cap;
    uint8_t head[PY_SPEC];
};
/* Opens the bytes object at obj; h holds its first have bytes, already read
 * (none: NULL, 0). 0, or -1 when obj is no bytes object of a sane size. */
int jst_py_table_open(struct py_table *t, uintptr_t obj, const uint8_t *h, size_t have);
/* Later windows of t are read into buf (cap bytes). */
void jst_py_table_buffer(struct py_table *t, uint8_t *buf, size_t cap);
/* The function ("Loader.load") and file of the code object whose header is
 * co, as "func\tfile" into text, and its line table opened into t. */
int jst_py_names(const uint8_t *co, char *text, size_t cap, struct py_table *t);
/* Where a long 3.11+ line table was: checkpoints at least step bytes
 * apart, each at an entry's start (its table position, the byte offset of
 * its first instruction, the line before it), made as the table is walked,
 * so that a later lookup in the same table starts at the checkpoint before
 * its instruction instead of at the table's start. */
#define PY_IDX_MAX 1024
struct py_lineidx {
    uintptr_t code, lt; /* the code object and table it belongs to */
    size_t size;
    uint32_t n, step;
    struct {
        uint32_t pos, start;
        int32_t line;
    } cp[PY_IDX_MAX];
};
/* Makes ix an empty index of the table t of code. */
void jst_py_index_reset(struct py_lineidx *ix, uintptr_t code, uintptr_t lt, size_t size);
/* The line of the instruction at byte offset addr, first: the code's first
 * line; 0 when the table says it has none. ix: that table's index (NULL:
 * none), used and extended. */
int jst_py_line(struct py_table *t, int first, long addr, struct py_lineidx *ix);
/* Reads a code object's header into co; 0, or -1 when code is no code object. */
int jst_py_code(uintptr_t code, uint8_t *co, size_t cap);

#endif
