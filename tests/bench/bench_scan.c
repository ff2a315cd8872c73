/*
 * Benchmark for `jitstall scan` and the image inspection under it. Prints:
 *   - the CLI's wall time, peak RSS and MB/s on a large CUDA library
 *     (libcublasLt.so.13 if present, else the largest library in
 *     /usr/local/cuda/lib64), as text and as --json;
 *   - the in-process headers-only walk of that library's .nv_fatbin;
 *   - jst_image_inspect + jst_image_decide per call on fixtures (ns);
 *   - jst_hash64 throughput.
 * usage: bench_scan [--jitstall PATH] [--arch sm_XY] [FILE]
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

int main(int argc, char **argv)
{
    char exe[PATH_MAX] = "", file[PATH_MAX] = "", arch[32] = "sm_90";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jitstall") && i + 1 < argc)
            snprintf(exe, sizeof(exe), "%s", argv[++i]);
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
    for (int json = 0; json <= 1; json++) {
        double s;
        long rss;
        /* Second run of each: the file is in the page cache, as in CI reruns. */
        run_cli(exe, arch, json, file, &s, &rss);
        int rc = run_cli(exe, arch, json, file, &s, &rss);
        if (rc < 0 || rc == 127) {
            printf("cli: could not run %s\n", exe);
            break;
        }
        printf("jitstall scan%s: %.3f s, peak RSS %.1f MB, %.0f MB/s (exit %d)\n",
               json ? " --json" : "", s, rss / 1024.0, mb / s, rc);
    }
    bench_walk(file, cc);

    char fixtures[PATH_MAX];
    snprintf(fixtures, sizeof(fixtures), "%s", __FILE__);
    char *t = strstr(fixtures, "tests/bench/");
    if (t)
        snprintf(t, sizeof(fixtures) - (size_t)(t - fixtures), "tests/fixtures");
    bench_inspect(fixtures, "sm80_ptx80.fatbin", 1);
    bench_inspect(fixtures, "sm80_ptx80.fatbin", 0);
    bench_inspect(fixtures, "multi.fatbin", 1);
    bench_inspect(fixtures, "sm90.cubin", 1);
    bench_inspect(fixtures, "k75.ptx", 1);
    bench_hash(1u << 20, 2000);
    bench_hash(64u << 20, 4);
    return 0;
}
