/*
 * Benchmark for `jitstall scan` and the image inspection under it. Prints:
 *   - the CLI's wall time, peak RSS and MB/s on a large CUDA library
 *     (libcublasLt.so.13 if present, else the largest library in
 *     /usr/local/cuda/lib64), as text and as --json;
 *   - the in-process headers-only walk of that library's .nv_fatbin;
 *   - jst_image_inspect + jst_image_decide per call on fixtures (ns);
 *   - jst_hash64 throughput;
 *   - the PTX-text search over an ELF file's data sections (in process, MB/s).
 * With --synthetic MB it first writes a synthetic host ELF of about MB
 * megabytes (fatbins from the fixtures in .nv_fatbin, text-like data with a
 * few PTX strings in .rodata and .data, filler code in .text) and measures
 * that. With --before PATH the CLI figures are also printed for another
 * jitstall binary (e.g. one built before a change), run alternately.
 * usage: bench_scan [--jitstall PATH] [--before PATH] [--arch sm_XY]
 *                   [--synthetic MB] [FILE]
 */
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "image.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The largest regular file under /usr/local/cuda/lib64 named *.so*. */
static int default_input(char *out, size_t n)
{
    const char *lt = "/usr/local/cuda/lib64/libcublasLt.so.13";
    if (access(lt, R_OK) == 0) {
        snprintf(out, n, "%s", lt);
        return 0;
    }
    DIR *d = opendir("/usr/local/cuda/lib64");
    if (!d)
        return -1;
    off_t best = -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof(p), "/usr/local/cuda/lib64/%s", de->d_name);
        if (strstr(de->d_name, ".so") && stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_size > best) {
            best = st.st_size;
            snprintf(out, n, "%s", p);
        }
    }
    closedir(d);
    return best < 0 ? -1 : 0;
}

/* Runs `jitstall scan --arch A [--json] file` with stdout to /dev/null. */
static double g_cpu_s; /* user + system time of the last run_cli */

static int run_cli(const char *exe, const char *arch, int json, const char *file, double *secs,
                   long *maxrss_kb)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 1);
        if (json)
            execl(exe, exe, "scan", "--arch", arch, "--json", file, (char *)NULL);
        else
            execl(exe, exe, "scan", "--arch", arch, file, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    *secs = now_s() - t0;
    *maxrss_kb = ru.ru_maxrss;
    g_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
              (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The .nv_fatbin section of a 64-bit ELF in memory, or -1. */
static int nv_fatbin(const uint8_t *p, size_t n, size_t *off, size_t *size)
{
    Elf64_Ehdr eh;
    if (n < sizeof(eh))
        return -1;
    memcpy(&eh, p, sizeof(eh));
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shoff > n || eh.e_shnum > (n - eh.e_shoff) / sizeof(Elf64_Shdr) ||
        eh.e_shstrndx >= eh.e_shnum)
        return -1;
    Elf64_Shdr str, sh;
    memcpy(&str, p + eh.e_shoff + eh.e_shstrndx * sizeof(sh), sizeof(str));
    if (str.sh_offset > n || str.sh_size > n - str.sh_offset)
        return -1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        memcpy(&sh, p + eh.e_shoff + i * sizeof(sh), sizeof(sh));
        if (sh.sh_name + sizeof(".nv_fatbin") <= str.sh_size &&
            !memcmp(p + str.sh_offset + sh.sh_name, ".nv_fatbin", sizeof(".nv_fatbin")) &&
            sh.sh_offset <= n && sh.sh_size <= n - sh.sh_offset) {
            *off = sh.sh_offset;
            *size = sh.sh_size;
            return 0;
        }
    }
    return -1;
}

static void bench_walk(const char *file, unsigned cc)
{
    int fd = open(file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        printf("walk: cannot open %s\n", file);
        return;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    size_t off, size;
    if (p == MAP_FAILED || nv_fatbin(p, n, &off, &size) != 0) {
        printf("walk: %s has no .nv_fatbin\n", file);
        if (p != MAP_FAILED)
            munmap(p, n);
        return;
    }
    double t0 = now_s();
    size_t images = 0, entries = 0, jit = 0, at = 0;
    while (at + 16 <= size) {
        size_t sz = jst_fatbin_size(p + off + at, size - at);
        if (!sz) {
            at += 8;
            continue;
        }
        struct jst_image img;
        struct jst_decision d;
        jst_image_inspect(p + off + at, sz, &img);
        jst_image_decide(&img, cc, 0, &d);
        images++;
        entries += img.n_entries;
        jit += d.verdict == JST_V_PTX_JIT;
        jst_image_free(&img);
        at += (sz + 7) & ~(size_t)7;
    }
    double dt = now_s() - t0;
    printf("walk (in process, headers only): %zu images (%zu would JIT), %zu entries, %.1f MB "
           ".nv_fatbin in %.1f ms = %.0f MB/s\n",
           images, jit, entries, size / 1e6, dt * 1e3, size / 1e6 / dt);
    munmap(p, n);
}

static uint8_t *load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b)
        b[n] = 0;
    *len = (size_t)n;
    return b;
}

static void bench_inspect(const char *fixtures, const char *name, size_t known)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", fixtures, name);
    size_t len;
    uint8_t *b = load(path, &len);
    if (!b) {
        printf("inspect: no fixture %s\n", path);
        return;
    }
    const int iters = 200000;
    volatile unsigned sink = 0;
    double t0 = now_s();
    for (int i = 0; i < iters; i++) {
        struct jst_image img;
        struct jst_decision d;
        jst_image_inspect(b, known == 1 ? len : 0, &img);
        jst_image_decide(&img, 90, 0, &d);
        sink += d.verdict;
        jst_image_free(&img);
    }
    double dt = now_s() - t0;
    printf("inspect+decide %-18s (%s): %.0f ns/call\n", name,
           known == 1 ? "known size" : "size from headers", dt * 1e9 / iters);
    (void)sink;
    free(b);
}

/* Throughput on a buffer of n bytes hashed reps times (1 MiB stays in cache,
 * 64 MiB measures memory bandwidth as much as the hash). */
static void bench_hash(size_t n, int reps)
{
    uint8_t *b = malloc(n);
    if (!b)
        return;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 131 + (i >> 9));
    volatile uint64_t h = jst_hash64(b, n); /* warm */
    double t0 = now_s();
    for (int r = 0; r < reps; r++)
        h ^= jst_hash64(b, n);
    double dt = now_s() - t0;
    printf("jst_hash64 on %zu MiB: %.2f GB/s\n", n >> 20, (double)reps * n / 1e9 / dt);
    (void)h;
    free(b);
}

/* ---- a synthetic large ELF ---- */

static void fill_text_like(uint8_t *b, size_t n, unsigned seed)
{
    /* NUL-separated words and dotted names: what .rodata holds. */
    static const char *const words[] = {"error: ", "libfoo.so",    "config.value", "cublas",
                                        "%s:%d ",  "lib.version ", "0x%08x",       "kernel "};
    size_t i = 0;
    while (i < n) {
        seed = seed * 1103515245u + 12345u;
        /* One word in 512 holds ".version"; a string that holds it but is no
         * PTX must be rejected cheaply. */
        unsigned r = (seed >> 16) % 512;
        const char *w = words[r == 5 ? 5 : r % 8 == 5 ? 0 : r % 8];
        size_t k = strlen(w);
        if (k > n - i)
            k = n - i;
        memcpy(b + i, w, k);
        i += k;
        if (i < n && (seed >> 8) % 5 == 0)
            b[i++] = 0;
    }
}

static int put_section(FILE *f, Elf64_Shdr *sh, unsigned name, unsigned type, uint64_t flags,
                       const uint8_t *data, size_t size)
{
    long at = ftell(f);
    memset(sh, 0, sizeof(*sh));
    sh->sh_name = name;
    sh->sh_type = type;
    sh->sh_flags = flags;
    sh->sh_offset = (uint64_t)at;
    sh->sh_size = size;
    sh->sh_addralign = 8;
    return fwrite(data, 1, size, f) == size ? 0 : -1;
}

/* Writes an ELF of about mb MB to path: 40% .nv_fatbin (fixture fatbins back
 * to back), 35% .rodata and 10% .data (text-like, 4 PTX strings each), the
 * rest .text. Returns 0. */
static int write_synthetic(const char *path, size_t mb, const char *fixtures)
{
    char fp[PATH_MAX + 32];
    size_t nfb[3], nptx;
    static const char *const fbs[3] = {"sm90.fatbin", "ptx75.fatbin", "multi.fatbin"};
    uint8_t *fb[3], *ptx;
    for (int i = 0; i < 3; i++) {
        snprintf(fp, sizeof(fp), "%s/%s", fixtures, fbs[i]);
        if (!(fb[i] = load(fp, &nfb[i])))
            return -1;
    }
    snprintf(fp, sizeof(fp), "%s/k75.ptx", fixtures);
    if (!(ptx = load(fp, &nptx)))
        return -1;
    size_t total = mb << 20,
           sz[4] = {total / 100 * 40, total / 100 * 35, total / 10, total / 100 * 15};
    uint8_t *buf = calloc(1, sz[0] + 8); /* trailing zeros after the fatbins are skipped */
    FILE *f = fopen(path, "wb");
    if (!buf || !f)
        return -1;
    Elf64_Ehdr eh = {0};
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_DYN;
    eh.e_machine = EM_X86_64;
    eh.e_version = EV_CURRENT;
    eh.e_ehsize = sizeof(eh);
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = 6;
    eh.e_shstrndx = 5;
    fwrite(&eh, sizeof(eh), 1, f);
    static const char names[] = "\0.text\0.rodata\0.nv_fatbin\0.data\0.shstrtab";
    Elf64_Shdr sh[6] = {{0}};
    int rc = 0;
    for (size_t at = 0, k = 0; at + nfb[k % 3] + 8 <= sz[0]; k++) { /* .nv_fatbin */
        memcpy(buf + at, fb[k % 3], nfb[k % 3]);
        at += (nfb[k % 3] + 7) & ~(size_t)7;
    }
    /* Name offsets in names[]: .text 1, .rodata 7, .nv_fatbin 15, .data 26, .shstrtab 32. */
    rc |= put_section(f, &sh[3], 15, SHT_PROGBITS, SHF_ALLOC, buf, sz[0]);
    for (int s = 1; s <= 3; s++) { /* .rodata, .data, .text */
        uint8_t *d = realloc(buf, sz[s]);
        if (!d)
            return -1;
        buf = d;
        fill_text_like(buf, sz[s], (unsigned)s);
        for (int k = 0; s < 3 && k < 4; k++) { /* four PTX strings, NUL on both sides */
            size_t at = sz[s] / 5 * (size_t)(k + 1);
            buf[at - 1] = 0;
            memcpy(buf + at, ptx, nptx);
            buf[at + nptx] = 0;
        }
        static const unsigned nm[4] = {0, 7, 26, 1};
        static const uint64_t fl[4] = {0, SHF_ALLOC, SHF_ALLOC | SHF_WRITE,
                                       SHF_ALLOC | SHF_EXECINSTR};
        rc |= put_section(f,
                          &sh[s == 1   ? 2
                              : s == 2 ? 4
                                       : 1],
                          nm[s], SHT_PROGBITS, fl[s], buf, sz[s]);
    }
    rc |= put_section(f, &sh[5], 32, SHT_STRTAB, 0, (const uint8_t *)names, sizeof(names));
    eh.e_shoff = (uint64_t)ftell(f);
    rc |= fwrite(sh, sizeof(sh), 1, f) != 1;
    rc |= fseek(f, 0, SEEK_SET) != 0 || fwrite(&eh, sizeof(eh), 1, f) != 1;
    rc |= fclose(f) != 0;
    free(buf);
    free(ptx);
    for (int i = 0; i < 3; i++)
        free(fb[i]);
    return rc ? -1 : 0;
}

struct text_count {
    size_t found, bytes;
};

static void count_text(void *ctx, size_t off, size_t len)
{
    struct text_count *t = ctx;
    (void)off;
    t->found++;
    t->bytes += len;
}

static void count_section(void *ctx, size_t off, size_t size)
{
    size_t *total = ctx;
    (void)off;
    *total += size;
}

/* The PTX-text search alone, in process, over every data section. */
static void bench_texts(const char *file)
{
    int fd = open(file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return;
    size_t n = (size_t)st.st_size, data = 0;
    uint8_t *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return;
    struct text_count t = {0, 0};
    jst_elf_data_sections(p, n, count_section, &data);
    double t0 = now_s();
    jst_elf_ptx_texts(p, n, count_text, &t);
    double dt = now_s() - t0;
    printf("PTX-text search (in process): %zu strings (%zu bytes) in %.1f MB of data sections, "
           "%.1f ms = %.0f MB/s\n",
           t.found, t.bytes, data / 1e6, dt * 1e3, data / 1e6 / (dt > 0 ? dt : 1e-9));
    munmap(p, n);
}

static void bench_cli(const char *label, const char *exe, const char *arch, const char *file,
                      double mb)
{
    for (int json = 0; json <= 1; json++) {
        double s, best = 1e9, cpu = 1e9;
        long rss = 0, r;
        int rc = 0;
        /* Best of 3 after one untimed run (the file is then in the page cache). */
        run_cli(exe, arch, json, file, &s, &r);
        for (int k = 0; k < 3; k++) {
            rc = run_cli(exe, arch, json, file, &s, &r);
            if (s < best)
                best = s;
            if (g_cpu_s < cpu)
                cpu = g_cpu_s;
            rss = r > rss ? r : rss;
        }
        if (rc < 0 || rc == 127) {
            printf("cli: could not run %s\n", exe);
            return;
        }
        printf("%sjitstall scan%s: %.3f s (CPU %.3f s), peak RSS %.1f MB, %.0f MB/s (exit %d)\n",
               label, json ? " --json" : "", best, cpu, rss / 1024.0, mb / best, rc);
    }
}

int main(int argc, char **argv)
{
    char exe[PATH_MAX] = "", file[PATH_MAX] = "", arch[32] = "sm_90", before[PATH_MAX] = "";
    size_t synth_mb = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jitstall") && i + 1 < argc)
            snprintf(exe, sizeof(exe), "%s", argv[++i]);
        else if (!strcmp(argv[i], "--before") && i + 1 < argc)
            snprintf(before, sizeof(before), "%s", argv[++i]);
        else if (!strcmp(argv[i], "--synthetic") && i + 1 < argc)
            synth_mb = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc)
            snprintf(arch, sizeof(arch), "%s", argv[++i]);
        else
            snprintf(file, sizeof(file), "%s", argv[i]);
    }
    if (!exe[0]) { /* build/tests/bench/bench_scan -> build/jitstall */
        char self[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (k > 0) {
            self[k] = 0;
            snprintf(exe, sizeof(exe), "%s/../../jitstall", dirname(self));
        }
    }
    char fixtures[PATH_MAX];
    snprintf(fixtures, sizeof(fixtures), "%s", __FILE__);
    char *t = strstr(fixtures, "tests/bench/");
    if (t)
        snprintf(t, sizeof(fixtures) - (size_t)(t - fixtures), "tests/fixtures");
    if (synth_mb) {
        if (!file[0])
            snprintf(file, sizeof(file), "/tmp/jst-bench-synthetic-%zuMB.so", synth_mb);
        if (write_synthetic(file, synth_mb, fixtures) != 0) {
            fprintf(stderr, "bench_scan: cannot write %s\n", file);
            return 2;
        }
        printf("wrote a synthetic ELF: %s\n", file);
    }
    if (!file[0] && default_input(file, sizeof(file)) != 0) {
        fprintf(stderr, "bench_scan: no input given and no CUDA library found\n");
        return 2;
    }
    unsigned cc = jst_arch_parse(arch, NULL);
    struct stat st;
    if (stat(file, &st) != 0 || !cc) {
        fprintf(stderr, "bench_scan: cannot stat %s or bad arch %s\n", file, arch);
        return 2;
    }
    double mb = st.st_size / 1e6;
    printf("input: %s (%.1f MB), arch %s\n", file, mb, arch);
    if (before[0])
        bench_cli("before: ", before, arch, file, mb);
    bench_cli(before[0] ? "after:  " : "", exe, arch, file, mb);
    if (before[0]) /* alternate, so that a busy machine hurts both alike */
        bench_cli("before: ", before, arch, file, mb);
    bench_walk(file, cc);
    bench_texts(file);
    bench_inspect(fixtures, "sm80_ptx80.fatbin", 1);
    bench_inspect(fixtures, "sm80_ptx80.fatbin", 0);
    bench_inspect(fixtures, "multi.fatbin", 1);
    bench_inspect(fixtures, "sm90.cubin", 1);
    bench_inspect(fixtures, "k75.ptx", 1);
    bench_hash(1u << 20, 2000);
    bench_hash(64u << 20, 4);
    return 0;
}
