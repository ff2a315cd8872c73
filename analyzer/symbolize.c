/*
 * Offline symbolization of the stacks in a trace with elfutils' libdwfl: each
 * recorded module is opened from its path (or, when the file on disk is gone
 * or has another build-id, from the build-id debug directory) and reported at
 * its recorded load bias; IPs become function, file and line, or
 * module+offset with a plain note saying why not. A module file is opened
 * once per analyzer run, not once per trace: a directory of thousands of
 * traces of one program reads its debug sections once.
 */
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "ixfind.h"
#include "modix.h"
#include "symclass.h"
#include "symbolize.h"
#include "openreg.h"

#define SYM_NOTE_CHANGED "module changed since the trace"
#define SYM_NOTE_MISSING "module file not found"
#define SYM_NOTE_UNREADABLE "module file unreadable"
#define SYM_PYTHON "[python interpreter]"

/* One module file as opened, shared by every trace that maps the same file:
 * same recorded path and identity (build-id, size, mtime) and the same file
 * on disk now (device, inode, size, mtime). */
struct sym_file {
    char *path;
    uint8_t *build_id;
    size_t build_id_len;
    uint64_t file_size, mtime_ns;
    struct stat disk; /* st_ino 0 and st_dev 0: not there */
    char debug_root[PATH_MAX];
    Dwfl *dwfl; /* NULL when the module cannot be read */
    Dwfl_Module *mod;
    uint64_t bias; /* the load bias it was reported at */
    const char *note;
    struct sym_file *next;
};

struct sym_mod {
    int tried;
    struct sym_file *file; /* NULL: not opened (python, or out of memory) */
    uint64_t delta;        /* this process's bias minus the file's */
    const char *note;      /* why frames in it cannot be symbolized */
    int internal, python;
};

struct jst_symbolizer {
    const struct jst_process *p;
    struct sym_mod *mods; /* parallel to p->mods */
    size_t *stack_ix;     /* stacks sorted by id, built on first use */
    struct jst_seq_pos *seq_ix;
    int indexed;
    struct jst_modix *modix; /* address -> map entry, built on first use */
    int modix_built;
    char debug_root[PATH_MAX];
};

/* The files opened so far in this run, and libdwfl's callbacks (it keeps a
 * pointer to them and to the debuginfo path). */
#define SYM_BUCKETS 1024
static struct sym_file *sym_files[SYM_BUCKETS];
static size_t sym_n_opened;
static char *sym_debuginfo_path;
static Dwfl_Callbacks sym_cb;

struct jst_symbolizer *jst_symbolizer_new(const struct jst_process *p)
{
    struct jst_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->p = p;
    s->mods = calloc(p->n_mods ? p->n_mods : 1, sizeof *s->mods);
    const char *root = getenv("JITSTALL_DEBUG_DIR");
    snprintf(s->debug_root, sizeof s->debug_root, "%s", root && *root ? root : "/usr/lib/debug");
    size_t n = strlen(s->debug_root) + 16;
    char *dip = malloc(n);
    if (!s->mods || !dip) {
        free(dip);
        jst_symbolizer_free(s);
        return NULL;
    }
    snprintf(dip, n, "-:.debug:%s", s->debug_root);
    /* The debug root is read once per run: files opened under an older one
     * keep it (it is part of their identity). */
    if (!sym_debuginfo_path || strcmp(sym_debuginfo_path, dip) != 0) {
        free(sym_debuginfo_path);
        sym_debuginfo_path = dip;
    } else {
        free(dip);
    }
    sym_cb.find_elf = dwfl_build_id_find_elf;
    sym_cb.find_debuginfo = dwfl_standard_find_debuginfo;
    sym_cb.section_address = dwfl_offline_section_address;
    sym_cb.debuginfo_path = &sym_debuginfo_path;
    elf_version(EV_CURRENT);
    return s;
}

void jst_symbolizer_free(struct jst_symbolizer *s)
{
    if (!s)
        return;
    free(s->mods);
    free(s->stack_ix);
    free(s->seq_ix);
    jst_modix_free(s->modix);
    free(s);
}

void jst_symbolize_cache_clear(void)
{
    for (size_t b = 0; b < SYM_BUCKETS; b++) {
        while (sym_files[b]) {
            struct sym_file *f = sym_files[b];
            sym_files[b] = f->next;
            if (f->dwfl)
                dwfl_end(f->dwfl);
            free(f->path);
            free(f->build_id);
            free(f);
        }
    }
    free(sym_debuginfo_path);
    sym_debuginfo_path = NULL;
    sym_n_opened = 0;
}

size_t jst_symbolize_files_opened(void)
{
    return sym_n_opened;
}

/* Build-id of the ELF file at path: 1 read (len may be 0: none), 0 missing, -1 not ELF. */
static int sym_file_build_id(const char *path, uint8_t *out, size_t cap, size_t *len)
{
    *len = 0;
    int fd = jst_open_regular(path);
    if (fd < 0)
        return errno == JST_ENOTREG ? -1 : 0;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc = -1;
    if (elf && elf_kind(elf) == ELF_K_ELF) {
        const void *id;
        ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
        if (n > 0 && (size_t)n <= cap) {
            memcpy(out, id, (size_t)n);
            *len = (size_t)n;
        }
        rc = 1;
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

/* The file to read for a recorded module: its own path when it is still the
 * same file, else the debug file named by the build-id. NULL with *note set
 * when neither is there. */
static const char *sym_pick_file(struct jst_symbolizer *s, const struct jst_modmap *m, char *buf,
                                 size_t n, const char **note)
{
    uint8_t id[64];
    size_t id_len;
    int r = sym_file_build_id(m->path, id, sizeof id, &id_len);
    if (r == 1) {
        int same;
        if (m->build_id_len)
            same = id_len == m->build_id_len && memcmp(id, m->build_id, id_len) == 0;
        else {
            /* No build-id recorded: size and mtime must still agree. */
            struct stat st;
            same = stat(m->path, &st) == 0 &&
                   (!m->file_size || (uint64_t)st.st_size == m->file_size) &&
                   (!m->mtime_ns ||
                    (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec ==
                        m->mtime_ns);
        }
        if (same)
            return m->path;
        *note = SYM_NOTE_CHANGED;
    } else {
        *note = r == 0 ? SYM_NOTE_MISSING : SYM_NOTE_UNREADABLE;
    }
    if (m->build_id_len >= 2) {
        int k = snprintf(buf, n, "%s/.build-id/%02x/", s->debug_root, m->build_id[0]);
        for (size_t i = 1; i < m->build_id_len && k > 0 && (size_t)k + 3 < n; i++)
            k += snprintf(buf + k, n - (size_t)k, "%02x", m->build_id[i]);
        if (k > 0 && (size_t)k + 7 < n) {
            snprintf(buf + k, n - (size_t)k, ".debug");
            if (sym_file_build_id(buf, id, sizeof id, &id_len) == 1 && id_len == m->build_id_len &&
                memcmp(id, m->build_id, id_len) == 0) {
                *note = NULL;
                return buf;
            }
        }
    }
    return NULL;
}

static uint64_t sym_key_hash(const struct jst_modmap *m, const struct stat *st)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *c = m->path; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    for (size_t i = 0; i < m->build_id_len; i++)
        h = (h ^ m->build_id[i]) * 0x100000001b3ull;
    h = (h ^ m->file_size) * 0x100000001b3ull;
    h = (h ^ m->mtime_ns) * 0x100000001b3ull;
    h = (h ^ (uint64_t)st->st_ino) * 0x100000001b3ull;
    return (h ^ (uint64_t)st->st_size) * 0x100000001b3ull;
}

static int sym_same_file(const struct sym_file *f, const struct jst_modmap *m,
                         const struct stat *st, const char *root)
{
    return strcmp(f->path, m->path) == 0 && f->build_id_len == m->build_id_len &&
           (!m->build_id_len || memcmp(f->build_id, m->build_id, m->build_id_len) == 0) &&
           f->file_size == m->file_size && f->mtime_ns == m->mtime_ns &&
           f->disk.st_dev == st->st_dev && f->disk.st_ino == st->st_ino &&
           f->disk.st_size == st->st_size && f->disk.st_mtim.tv_sec == st->st_mtim.tv_sec &&
           f->disk.st_mtim.tv_nsec == st->st_mtim.tv_nsec && strcmp(f->debug_root, root) == 0;
}

/* Opens a module file: a Dwfl of its own, so that modules that reused an
 * address range after a dlclose never overlap; reported at this map entry's
 * bias (other processes use it shifted by their own). */
static void sym_file_open(struct jst_symbolizer *s, const struct jst_modmap *m, struct sym_file *f)
{
    char dbg[PATH_MAX];
    const char *file = sym_pick_file(s, m, dbg, sizeof dbg, &f->note);
    if (!file)
        return;
    sym_n_opened++;
    Dwfl *d = dwfl_begin(&sym_cb);
    if (!d) {
        f->note = SYM_NOTE_UNREADABLE;
        return;
    }
    dwfl_report_begin(d);
    /* ET_DYN: the recorded bias plus each segment's p_vaddr; ET_EXEC: as linked. */
    Dwfl_Module *mod = dwfl_report_elf(d, jst_sym_base(m->path), file, -1, m->bias, true);
    dwfl_report_end(d, NULL, NULL);
    if (!mod) {
        dwfl_end(d);
        f->note = SYM_NOTE_UNREADABLE;
        return;
    }
    f->dwfl = d;
    f->mod = mod;
    f->bias = m->bias;
}

/* The shared file entry for map entry m, opened on first use; NULL when out
 * of memory. */
static struct sym_file *sym_file_get(struct jst_symbolizer *s, const struct jst_modmap *m)
{
    struct stat st;
    if (stat(m->path, &st) != 0)
        memset(&st, 0, sizeof st);
    uint64_t h = sym_key_hash(m, &st);
    struct sym_file **b = &sym_files[h % SYM_BUCKETS];
    for (struct sym_file *f = *b; f; f = f->next)
        if (sym_same_file(f, m, &st, s->debug_root))
            return f;
    struct sym_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = strdup(m->path);
    f->build_id = m->build_id_len ? malloc(m->build_id_len) : NULL;
    if (!f->path || (m->build_id_len && !f->build_id)) {
        free(f->path);
        free(f->build_id);
        free(f);
        return NULL;
    }
    if (m->build_id_len)
        memcpy(f->build_id, m->build_id, m->build_id_len);
    f->build_id_len = m->build_id_len;
    f->file_size = m->file_size;
    f->mtime_ns = m->mtime_ns;
    f->disk = st;
    snprintf(f->debug_root, sizeof f->debug_root, "%s", s->debug_root);
    sym_file_open(s, m, f);
    f->next = *b;
    *b = f;
    return f;
}

/* Ties module i of the map to its shared file, once per symbolizer. */
static struct sym_mod *sym_open(struct jst_symbolizer *s, size_t i)
{
    struct sym_mod *sm = &s->mods[i];
    if (sm->tried)
        return sm;
    sm->tried = 1;
    const struct jst_modmap *m = &s->p->mods[i];
    sm->internal = jst_sym_internal_path(m->path);
    sm->python = jst_sym_python_path(m->path);
    if (sm->python)
        return sm;
    sm->file = sym_file_get(s, m);
    if (!sm->file) {
        sm->note = SYM_NOTE_UNREADABLE;
        return sm;
    }
    sm->note = sm->file->note;
    sm->delta = m->bias - sm->file->bias;
    return sm;
}

/* Sorted indexes of the stacks by id and the calls by seq, so that each
 * lookup is a binary search, not a scan of the trace (left NULL when out of
 * memory: the lookups then scan). */
static void sym_index(struct jst_symbolizer *s)
{
    s->indexed = 1;
    jst_ix_build(s->p, &s->seq_ix, &s->stack_ix);
}

/* The map entry that held ip when call number k ran: loaded (initially or by a
 * dlopen recorded before the call) and not closed since. When k is unknown or
 * no entry fits in time, the latest entry whose range holds ip. -1: none. */
static long sym_find_mod(struct jst_symbolizer *s, uint64_t ip, long k)
{
    if (!s->modix_built) {
        s->modix_built = 1;
        s->modix = jst_modix_build(s->p->mods, s->p->n_mods);
    }
    return jst_modix_at(s->modix, ip, k);
}

static void sym_copy(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

/* Name of a subprogram or of an inlined instance (through its abstract
 * origin): the linkage name demangled, else the plain name. */
static void sym_die_name(Dwarf_Die *die, char *out, size_t n)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (name) {
        jst_demangle(name, out, n);
        return;
    }
    name = dwarf_attr_integrate(die, DW_AT_name, &attr) ? dwarf_formstring(&attr) : NULL;
    sym_copy(out, n, name);
}

/* Where an inlined instance was called from: DW_AT_call_file / DW_AT_call_line. */
static void sym_call_loc(Dwarf_Die *cu, Dwarf_Die *inl, struct jst_frame *f)
{
    Dwarf_Attribute attr;
    Dwarf_Word file_idx, line;
    Dwarf_Files *files;
    size_t nfiles;
    f->file[0] = '\0';
    f->line = 0;
    if (!dwarf_attr(inl, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &line) != 0)
        return;
    if (!dwarf_attr(inl, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &file_idx) != 0 ||
        dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || file_idx >= nfiles)
        return;
    const char *name = dwarf_filesrc(files, file_idx, NULL, NULL);
    if (!name)
        return;
    sym_copy(f->file, sizeof f->file, name);
    f->line = (unsigned)line;
}

/* Expands out[0], already filled for address a, into the chain of functions
 * inlined at a: out[0] becomes the innermost inlined function (with the line
 * of a), and each next frame the function it was inlined into, at the line of
 * the call. The last one keeps the symbol table's name. Returns the count. */
static size_t sym_inlined(Dwfl_Module *mod, Dwarf_Addr a, struct jst_frame *out, size_t max)
{
    Dwarf_Addr cubias;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &cubias);
    if (!cu)
        return 1;
    Dwarf_Die *scopes = NULL;
    int ns = dwarf_getscopes(cu, a - cubias, &scopes);
    if (ns <= 0)
        return 1;
    /* dwarf_getscopes continues from an inlined instance into the scopes of
     * its abstract definition; the functions it was inlined into are the
     * scopes that physically contain the instance. */
    if (dwarf_tag(&scopes[0]) != DW_TAG_inlined_subroutine) {
        free(scopes);
        return 1;
    }
    Dwarf_Die inner = scopes[0];
    free(scopes);
    scopes = NULL;
    ns = dwarf_getscopes_die(&inner, &scopes);
    if (ns <= 0)
        return 1;
    /* The function scopes, innermost first, up to the real subprogram. */
    int fn[64], nfn = 0;
    for (int i = 0; i < ns && nfn < 64; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
            fn[nfn++] = i;
        if (tag == DW_TAG_subprogram)
            break;
    }
    if (nfn < 2 || dwarf_tag(&scopes[fn[0]]) != DW_TAG_inlined_subroutine) {
        free(scopes);
        return 1;
    }
    size_t n = (size_t)nfn < max ? (size_t)nfn : max;
    struct jst_frame base = out[0];
    for (size_t j = 0; j < n; j++) {
        struct jst_frame *f = &out[j];
        *f = base;
        f->note = NULL;
        if (j > 0)
            sym_call_loc(cu, &scopes[fn[j - 1]], f);
        if (j + 1 == (size_t)nfn && base.func[0])
            continue; /* the real function: the symbol table's (qualified) name */
        sym_die_name(&scopes[fn[j]], f->func, sizeof f->func);
        if (!f->func[0])
            sym_copy(f->func, sizeof f->func, base.func);
    }
    free(scopes);
    return n;
}

/* Fills the frames of one IP: one, or more when the code at ip was inlined
 * (innermost first, as a debugger shows them); returns how many (>= 1 when
 * max >= 1). All recorded IPs are return addresses (capture starts inside
 * jitstall and drops its own frames), so the lookup uses ip - 1, which lies
 * in the call instruction and so on the caller's line. */
static size_t sym_frames(struct jst_symbolizer *s, uint64_t ip, long k, struct jst_frame *out,
                         size_t max)
{
    if (max == 0)
        return 0;
    struct jst_frame *f = &out[0];
    memset(f, 0, sizeof *f);
    f->ip = ip;
    long mi = sym_find_mod(s, ip, k);
    if (mi < 0) {
        f->offset = ip;
        f->note = SYM_NOTE_UNKNOWN;
        return 1;
    }
    const struct jst_modmap *m = &s->p->mods[mi];
    struct sym_mod *sm = sym_open(s, (size_t)mi);
    f->module = m->path;
    f->offset = ip - m->bias;
    f->internal = sm->internal;
    f->pyglue = sm->python || jst_sym_pyglue_path(m->path);
    if (sm->python) {
        sym_copy(f->func, sizeof f->func, SYM_PYTHON);
        return 1;
    }
    if (!sm->file || !sm->file->mod) {
        f->note = sm->note;
        return 1;
    }
    /* The file is reported at the bias of the first process that used it. */
    Dwarf_Addr a = (ip ? ip - 1 : ip) - sm->delta;
    Dwfl_Module *mod = sm->file->mod;
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
    if (name && *name) {
        /* .dynsym names may carry a symbol version: "__libc_start_main@@GLIBC_2.34". */
        char plain[sizeof f->func];
        snprintf(plain, sizeof plain, "%s", name);
        char *at = strchr(plain, '@');
        if (at && at != plain)
            *at = '\0';
        jst_demangle(plain, f->func, sizeof f->func);
    }
    Dwfl_Line *line = dwfl_module_getsrc(mod, a);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        if (file && lineno > 0) {
            sym_copy(f->file, sizeof f->file, file);
            f->line = (unsigned)lineno;
        }
    }
    if (!f->func[0] && !f->file[0])
        f->note = SYM_NOTE_NOSYMS;
    size_t n = sym_inlined(mod, a, out, max);
    for (size_t i = 0; i < n; i++)
        if (!out[i].internal && out[i].func[0])
            out[i].internal = jst_sym_internal_func(out[i].func, out[i].file);
    return n;
}

/* One recorded Python frame, "func\tfile\tline", as a frame run by the
 * native frame at ip (0: beyond the captured native stack). */
static void sym_py_frame(struct jst_symbolizer *s, const char *text, uint64_t ip, long k,
                         struct jst_frame *f)
{
    memset(f, 0, sizeof *f);
    f->python = 1;
    f->ip = ip;
    long mi = ip ? sym_find_mod(s, ip, k) : -1;
    if (mi >= 0) {
        f->module = s->p->mods[mi].path;
        f->offset = ip - s->p->mods[mi].bias;
    }
    const char *t1 = strchr(text, '\t');
    const char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t1 || !t2) {
        sym_copy(f->func, sizeof f->func, text);
        f->pylib = 1;
        return;
    }
    snprintf(f->func, sizeof f->func, "%.*s", (int)(t1 - text), text);
    snprintf(f->file, sizeof f->file, "%.*s", (int)(t2 - t1 - 1), t1 + 1);
    long line = strtol(t2 + 1, NULL, 10);
    f->line = line > 0 && line < INT_MAX ? (unsigned)line : 0;
    f->pylib = jst_sym_pylib_file(f->file);
}

/* The Python frames run by native frame i of st (i == st->n: those beyond
 * the captured native stack), innermost first; returns how many. */
static size_t sym_py_frames(struct jst_symbolizer *s, const struct jst_stack *st, size_t i, long k,
                            struct jst_frame *out, size_t max)
{
    size_t n = 0;
    for (size_t j = 0; j < st->n_py && n < max; j++) {
        uint64_t at = st->py_native[j];
        if (at == i || (i == st->n && at > st->n))
            sym_py_frame(s, st->py_frames[j], i < st->n ? st->ips[i] : 0, k, &out[n++]);
    }
    return n;
}

size_t jst_symbolize_stack(struct jst_symbolizer *s, uint64_t stack_id, uint64_t seq,
                           struct jst_frame *out, size_t max)
{
    if (!s || !stack_id)
        return 0;
    if (!s->indexed)
        sym_index(s);
    const struct jst_stack *st = jst_ix_stack(s->p, s->stack_ix, stack_id);
    if (!st)
        return 0;
    long k = jst_ix_call(s->p, s->seq_ix, seq);
    size_t n = 0;
    for (size_t i = 0; i < st->n && n < max; i++) {
        /* An interpreter eval frame stands for the Python frames it runs. */
        size_t np = sym_py_frames(s, st, i, k, out + n, max - n);
        n += np ? np : sym_frames(s, st->ips[i], k, out + n, max - n);
    }
    n += sym_py_frames(s, st, st->n, k, out + n, max - n);
    jst_sym_mark_kernel_stubs(out, n);
    return n;
}
