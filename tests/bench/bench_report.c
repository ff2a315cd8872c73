/*
 * Benchmark for `jitstall report` at scale. Writes synthetic traces with the
 * real writer, runs the CLI on them and prints its wall time and peak RSS:
 *   - one trace of N loads (default 200,000, and half that, to show growth),
 *     each with a lookup and a first launch, stacks in the CLI binary itself
 *     so that call sites are symbolized;
 *   - a directory of M traces (default 5,000) of one program, each with a
 *     few loads and stacks in the same module files;
 *   - one trace of R highly compressible records (default 30,000,000
 *     identical lookups), and its size on disk.
 * usage: bench_report [--jitstall PATH] [--loads N] [--traces M]
 *                     [--records R] [--only loads|dir|records] [--dir TMPDIR]
 *                     [--keep 1]  (leave the traces in TMPDIR)
 * Not a test: timings are printed, never judged.
 */
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "trace.h"

#define BR_BIAS 0x555555554000ull
#define BR_NFUNCS 64

/* The module stacks point into: the CLI binary (it has debug info). */
struct br_mod {
    const char *path;
    uint64_t size, mtime_ns, end;
    uint8_t build_id[64];
    size_t build_id_len;
    uint64_t funcs[BR_NFUNCS]; /* offsets inside function bodies */
    size_t n_funcs;
};

static double br_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads the build-id and up to BR_NFUNCS function addresses of path. */
static int br_mod_read(struct br_mod *m, const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0)
        return -1;
    m->path = path;
    m->size = (uint64_t)st.st_size;
    m->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    m->end = BR_BIAS + m->size + 0x100000;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    Elf_Scn *scn = NULL;
    while (e && (scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (sh.sh_type == SHT_NOTE && d) {
            size_t off = 0, no, dof;
            GElf_Nhdr nh;
            while ((off = gelf_getnote(d, off, &nh, &no, &dof)) > 0)
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= sizeof m->build_id) {
                    memcpy(m->build_id, (char *)d->d_buf + dof, nh.n_descsz);
                    m->build_id_len = nh.n_descsz;
                }
        } else if (sh.sh_type == SHT_SYMTAB && d && sh.sh_entsize) {
            size_t n = sh.sh_size / sh.sh_entsize;
            for (size_t i = 0; i < n && m->n_funcs < BR_NFUNCS; i++) {
                GElf_Sym s;
                if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
                    s.st_size > 16 && s.st_value)
                    m->funcs[m->n_funcs++] = s.st_value + 8;
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return m->n_funcs ? 0 : -1;
}

struct br_w {
    struct jst_writer *w;
    uint8_t buf[8192];
    struct jst_rec r;
    uint64_t seq;
};

static void br_begin(struct br_w *b, uint16_t type)
{
    jst_rec_begin(&b->r, b->buf, sizeof b->buf, type);
}

static void br_emit(struct br_w *b)
{
    jst_writer_emit(b->w, &b->r, 0);
}

static void br_head(struct br_w *b, uint64_t pid, const struct br_mod *m, uint64_t t0)
{
    br_begin(b, JST_REC_PROCESS);
    jst_rec_u64(&b->r, JST_F_PID, pid);
    jst_rec_str(&b->r, JST_F_EXE, "/opt/app/bin/server");
    jst_rec_str(&b->r, JST_F_ARG, "server");
    jst_rec_u64(&b->r, JST_F_REALTIME_NS, 1700000000000000000ull + pid * 1000000000ull);
    jst_rec_u64(&b->r, JST_F_MONO_NS, t0);
    jst_rec_u64(&b->r, JST_F_PROC_START_NS, t0);
    br_emit(b);
    br_begin(b, JST_REC_DEVICE);
    jst_rec_u64(&b->r, JST_F_DEVICE, 0);
    jst_rec_u64(&b->r, JST_F_CC_MAJOR, 9);
    jst_rec_u64(&b->r, JST_F_CC_MINOR, 0);
    jst_rec_str(&b->r, JST_F_DEV_NAME, "NVIDIA H200");
    br_emit(b);
    br_begin(b, JST_REC_MODMAP);
    jst_rec_u64(&b->r, JST_F_MOD_EVENT, JST_MOD_INITIAL);
    jst_rec_str(&b->r, JST_F_MOD_PATH, m->path);
    jst_rec_u64(&b->r, JST_F_MOD_BIAS, BR_BIAS);
    jst_rec_u64(&b->r, JST_F_MOD_START, BR_BIAS);
    jst_rec_u64(&b->r, JST_F_MOD_END, m->end);
    jst_rec_u64(&b->r, JST_F_FILE_SIZE, m->size);
    jst_rec_u64(&b->r, JST_F_MTIME_NS, m->mtime_ns);
    jst_rec_bytes(&b->r, JST_F_BUILD_ID, m->build_id, m->build_id_len);
    br_emit(b);
    for (size_t s = 0; s < m->n_funcs; s++) {
        uint8_t ips[8 * 3];
        uint64_t v[3] = {BR_BIAS + m->funcs[s], BR_BIAS + m->funcs[(s + 1) % m->n_funcs],
                         BR_BIAS + m->funcs[(s + 7) % m->n_funcs]};
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 8; k++)
                ips[i * 8 + k] = (uint8_t)(v[i] >> (8 * k));
        br_begin(b, JST_REC_STACK);
        jst_rec_u64(&b->r, JST_F_STACK_ID, s + 1);
        jst_rec_bytes(&b->r, JST_F_IPS, ips, sizeof ips);
        br_emit(b);
    }
}

static void br_call(struct br_w *b, unsigned call, uint64_t start, uint64_t dur)
{
    br_begin(b, JST_REC_CALL);
    jst_rec_u64(&b->r, JST_F_SEQ, ++b->seq);
    jst_rec_u64(&b->r, JST_F_CALL_ID, call);
    jst_rec_str(&b->r, JST_F_CALL, jst_call_name(call));
    jst_rec_u64(&b->r, JST_F_TID, 7);
    jst_rec_u64(&b->r, JST_F_START_NS, start);
    jst_rec_u64(&b->r, JST_F_DUR_NS, dur);
}

/* Load i: JIT (cache hit, stored or too small) or SASS, from one of 100
 * libraries, then a lookup and a launch of its kernel. */
static uint64_t br_load(struct br_w *b, uint64_t i, uint64_t t, const struct br_mod *m)
{
    char src[64], kern[64];
    snprintf(src, sizeof src, "/opt/app/lib/libk%03u.so", (unsigned)(i % 100));
    snprintf(kern, sizeof kern, "_Z6kernelILi%uEEvPf", (unsigned)(i % 1000));
    int jit = i % 4 != 0;
    uint64_t dur = jit ? 2000000 + (i % 7) * 100000 : 300000;
    br_call(b, JST_CALL_cuModuleLoadData, t, dur);
    jst_rec_u64(&b->r, JST_F_HANDLE, 0x1000 + i);
    jst_rec_str(&b->r, JST_F_SOURCE, src);
    jst_rec_u64(&b->r, JST_F_IMAGE_KIND, JST_IMG_FATBIN);
    jst_rec_u64(&b->r, JST_F_IMAGE_SIZE, 65536);
    jst_rec_u64(&b->r, JST_F_IMAGE_HASH, 0xabc0000 + i % 100);
    jst_rec_u64(&b->r, JST_F_STACK_ID, 1 + i % m->n_funcs);
    jst_rec_str(&b->r, JST_F_KERNEL, kern);
    jst_rec_u64(&b->r, JST_F_TARGET_CC, 90);
    if (jit) {
        jst_rec_u64(&b->r, JST_F_VERDICT, JST_V_PTX_JIT);
        jst_rec_str(&b->r, JST_F_JIT_FROM, "compute_80");
        jst_rec_str(&b->r, JST_F_REASON, "PTX compute_80 only; GPU is sm_90");
        jst_rec_str(&b->r, JST_F_ENTRY, "ptx compute_80");
        jst_rec_u64(&b->r, JST_F_PTX_SIZE, 40000);
        unsigned cache = i % 3 == 0   ? JST_C_HIT
                         : i % 3 == 1 ? JST_C_MISS_STORED
                                      : JST_C_MISS_NOT_STORED;
        jst_rec_u64(&b->r, JST_F_CACHE, cache);
        if (cache == JST_C_MISS_NOT_STORED)
            jst_rec_u64(&b->r, JST_F_CACHE_REASON, JST_CR_TOO_SMALL);
        if (cache == JST_C_MISS_STORED)
            jst_rec_u64(&b->r, JST_F_CACHE_NEW_BYTES, 60000);
    } else {
        jst_rec_u64(&b->r, JST_F_VERDICT, JST_V_SASS);
        jst_rec_str(&b->r, JST_F_SASS_ARCH, "sm_90");
        jst_rec_str(&b->r, JST_F_ENTRY, "cubin sm_90");
    }
    br_emit(b);
    t += dur + 1000;
    br_call(b, JST_CALL_cuModuleGetFunction, t, 500);
    jst_rec_u64(&b->r, JST_F_HANDLE, 0x1000 + i);
    jst_rec_u64(&b->r, JST_F_FUNC, 0x900000 + i);
    jst_rec_str(&b->r, JST_F_NAME, kern);
    br_emit(b);
    t += 2000;
    br_call(b, JST_CALL_cuLaunchKernel, t, 4000);
    jst_rec_u64(&b->r, JST_F_FUNC, 0x900000 + i);
    jst_rec_str(&b->r, JST_F_NAME, kern);
    br_emit(b);
    return t + 5000;
}

static void br_tail(struct br_w *b, uint64_t t)
{
    br_begin(b, JST_REC_END);
    jst_rec_u64(&b->r, JST_F_START_NS, t);
    jst_rec_i64(&b->r, JST_F_EXIT_STATUS, 0);
    br_emit(b);
    jst_writer_close(b->w);
}

static int br_open(struct br_w *b, const char *path)
{
    unlink(path);
    memset(b, 0, sizeof *b);
    b->w = jst_writer_open(path);
    if (!b->w)
        fprintf(stderr, "bench_report: cannot write %s\n", path);
    return b->w ? 0 : -1;
}

static int br_gen_loads(const char *path, uint64_t n, const struct br_mod *m)
{
    struct br_w b;
    if (br_open(&b, path) < 0)
        return -1;
    uint64_t t = 1000000000ull;
    br_head(&b, 4242, m, t - 50000000);
    br_call(&b, JST_CALL_cuInit, t, 150000000);
    br_emit(&b);
    t += 150000000;
    for (uint64_t i = 0; i < n; i++)
        t = br_load(&b, i, t, m);
    br_tail(&b, t);
    return 0;
}

static int br_gen_dir(const char *dir, unsigned n, const struct br_mod *m)
{
    mkdir(dir, 0700);
    for (unsigned k = 0; k < n; k++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/server.%05u.jst", dir, k);
        struct br_w b;
        if (br_open(&b, path) < 0)
            return -1;
        uint64_t t = 1000000000ull;
        br_head(&b, 10000 + k, m, t - 50000000);
        for (uint64_t i = 0; i < 4; i++)
            t = br_load(&b, k * 4 + i, t, m);
        br_tail(&b, t);
    }
    return 0;
}

/* R identical lookups: what a service that looks its kernels up in a loop
 * leaves behind; zstd makes them almost nothing on disk. */
static int br_gen_records(const char *path, uint64_t n, const struct br_mod *m)
{
    struct br_w b;
    if (br_open(&b, path) < 0)
        return -1;
    uint64_t t = 1000000000ull;
    br_head(&b, 777, m, t - 50000000);
    t = br_load(&b, 1, t, m);
    for (uint64_t i = 0; i < n; i++) {
        br_call(&b, JST_CALL_cuModuleGetFunction, t, 500);
        jst_rec_u64(&b.r, JST_F_HANDLE, 0x1001);
        jst_rec_str(&b.r, JST_F_NAME, "_Z6kernelILi1EEvPf");
        br_emit(&b);
        t += 1000;
    }
    br_tail(&b, t);
    return 0;
}

/* Runs `jitstall report ARGS` with stdout to /dev/null; prints one line. */
static void br_run(const char *cli, const char *what, const char *arg)
{
    double t0 = br_now();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 1);
        execl(cli, cli, "report", arg, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
        printf("%-34s cannot run %s\n", what, cli);
        return;
    }
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    printf("%-34s %8.2f s wall %8.2f s CPU  peak RSS %8.1f MB  exit %d\n", what, br_now() - t0, cpu,
           (double)ru.ru_maxrss / 1024.0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);
}

static uint64_t br_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int main(int argc, char **argv)
{
    char cli[PATH_MAX], self[PATH_MAX];
    uint64_t loads = 200000, records = 30000000;
    unsigned traces = 5000;
    const char *only = NULL, *tmp = "/tmp";
    int keep = 0;
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(cli, sizeof cli, "%s/../../jitstall", dirname(self));
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--jitstall"))
            snprintf(cli, sizeof cli, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--loads"))
            loads = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--traces"))
            traces = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--records"))
            records = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--dir"))
            tmp = argv[i + 1];
        else if (!strcmp(argv[i], "--keep"))
            keep = atoi(argv[i + 1]);
    }
    struct br_mod m = {0};
    if (br_mod_read(&m, cli) < 0) {
        fprintf(stderr, "bench_report: cannot read functions of %s\n", cli);
        return 2;
    }
    char path[PATH_MAX], label[96];
    printf("jitstall: %s\n", cli);
    if (!only || !strcmp(only, "loads")) {
        uint64_t sizes[2] = {loads / 2, loads};
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "%s/bench_report_loads.jst", tmp);
            if (br_gen_loads(path, sizes[k], &m) < 0)
                return 2;
            snprintf(label, sizeof label, "report, %llu loads (%.1f MB)",
                     (unsigned long long)sizes[k], (double)br_size(path) / 1e6);
            br_run(cli, label, path);
            if (!keep)
                unlink(path);
        }
    }
    if (!only || !strcmp(only, "dir")) {
        snprintf(path, sizeof path, "%s/bench_report_dir", tmp);
        if (br_gen_dir(path, traces, &m) < 0)
            return 2;
        snprintf(label, sizeof label, "report, a directory of %u traces", traces);
        br_run(cli, label, path);
        for (unsigned k = 0; !keep && k < traces; k++) {
            char f[PATH_MAX + 32];
            snprintf(f, sizeof f, "%s/server.%05u.jst", path, k);
            unlink(f);
        }
        if (!keep)
            rmdir(path);
    }
    if (!only || !strcmp(only, "records")) {
        snprintf(path, sizeof path, "%s/bench_report_records.jst", tmp);
        if (br_gen_records(path, records, &m) < 0)
            return 2;
        snprintf(label, sizeof label, "report, %llu lookups (%.1f MB)", (unsigned long long)records,
                 (double)br_size(path) / 1e6);
        br_run(cli, label, path);
        if (!keep)
            unlink(path);
    }
    return 0;
}
