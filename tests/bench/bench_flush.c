/*
 * Benchmark: what it costs to end a block at every rare record (compiles,
 * loads, failures, notes, reaps), so that a process ended by SIGTERM,
 * SIGKILL or _exit loses none that completed (interpose/sink.c, rec_urgent).
 * Writes N compile-sized records through the trace writer into a file, once
 * with every record flushed (a block and a write(2) each) and once batched
 * (blocks of 128 KiB, zstd), and prints the time and file bytes per record of
 * each. Rare records come at most a few thousand per process (one per
 * compiler child, load or note), so the figure to compare is the flushed
 * cost per record against a compile's own time (milliseconds).
 *
 * usage: bench_flush [N]   (default 20000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "trace.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A record the size of a COMPILE of ptxas with its arguments. */
static void compile_rec(struct jst_rec *r, uint8_t *buf, size_t cap, unsigned i)
{
    char out[128];
    snprintf(out, sizeof out, "/tmp/torchinductor_user/triton/0/%08x/kernel.cubin", i);
    jst_rec_begin(r, buf, cap, JST_REC_COMPILE);
    jst_rec_u64(r, JST_F_SEQ, i);
    jst_rec_str(r, JST_F_COMPILER, "ptxas");
    jst_rec_str(r, JST_F_PROGRAM, "/usr/local/cuda/bin/ptxas");
    jst_rec_u64(r, JST_F_CHILD_PID, 4000 + i);
    jst_rec_u64(r, JST_F_TID, 1234);
    jst_rec_u64(r, JST_F_START_NS, 1000000000ull * i);
    jst_rec_u64(r, JST_F_DUR_NS, 30000000);
    jst_rec_u64(r, JST_F_WAIT_STATUS, 0);
    const char *args[] = {"ptxas", "-lineinfo", "-v", "--gpu-name=sm_90a", out, "-o", out};
    for (size_t k = 0; k < sizeof args / sizeof args[0]; k++)
        jst_rec_str(r, JST_F_ARG, args[k]);
    jst_rec_str(r, JST_F_TARGET, "sm_90a");
    jst_rec_str(r, JST_F_OUTPUT, out);
}

/* Writes n records to a new file, flushing each or not: ns per record, and
 * the file's size in *bytes. */
static double run(unsigned n, int flush, off_t *bytes)
{
    char path[] = "/tmp/bench_flush_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(path);
    struct jst_writer *w = jst_writer_open(path);
    if (!w)
        return -1;
    uint8_t buf[2048];
    struct jst_rec r;
    double t0 = now_ns();
    for (unsigned i = 0; i < n; i++) {
        compile_rec(&r, buf, sizeof buf, i);
        if (jst_writer_emit(w, &r, flush) != 0)
            return -1;
    }
    jst_writer_close(w);
    double t = (now_ns() - t0) / n;
    struct stat st;
    *bytes = stat(path, &st) == 0 ? st.st_size : 0;
    unlink(path);
    return t;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
    if (!n) {
        fprintf(stderr, "usage: bench_flush [N]\n");
        return 2;
    }
    off_t fb = 0, bb = 0;
    run(n / 10 + 1, 1, &fb); /* warm the page cache and the allocator */
    double flushed = run(n, 1, &fb), batched = run(n, 0, &bb);
    if (flushed < 0 || batched < 0) {
        perror("bench_flush");
        return 1;
    }
    printf("%u compile-sized records\n", n);
    printf("  each flushed (a block, a write(2)):  %8.0f ns/record  %6.1f bytes/record\n", flushed,
           (double)fb / n);
    printf("  batched (128 KiB zstd blocks):        %8.0f ns/record  %6.1f bytes/record\n", batched,
           (double)bb / n);
    printf("  a flush costs %.1f us per record; a ptxas run takes milliseconds\n",
           (flushed - batched) / 1000.0);
    return 0;
}
