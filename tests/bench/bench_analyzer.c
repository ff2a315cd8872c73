/*
 * Benchmark: analyzer throughput. Writes a large synthetic trace through the
 * real writer (one process; every 1000th event a module load, one of them
 * a JIT load, the rest function lookups and first launches of distinct
 * functions: a program's loads are few, its lookups and launches many), then times `jitstall report
 * --json` and `jitstall dump` on it and prints events per second. Goal: at least 1 M
 * events/s for report.
 *
 * usage: bench_analyzer JITSTALL_CLI [EVENTS]   (default 1000000)
 * Exit: 0 goal met, 1 missed, 2 error.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

extern char **environ;

static struct jst_writer *ba_w;
static uint64_t ba_seq;

static double ba_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void ba_emit(struct jst_rec *r)
{
    if (jst_writer_emit(ba_w, r, 0) != 0) {
        fprintf(stderr, "bench_analyzer: write failed\n");
        exit(2);
    }
}

/* A call record with the common fields; the caller adds its own and emits. */
static void ba_call(struct jst_rec *r, void *buf, size_t cap, unsigned id, const char *name,
                    uint64_t t, uint64_t dur)
{
    jst_rec_begin(r, buf, cap, JST_REC_CALL);
    jst_rec_u64(r, JST_F_SEQ, ++ba_seq);
    jst_rec_u64(r, JST_F_CALL_ID, id);
    jst_rec_str(r, JST_F_CALL, name);
    jst_rec_u64(r, JST_F_ROUTE, JST_ROUTE_DIRECT);
    jst_rec_u64(r, JST_F_TID, 7);
    jst_rec_u64(r, JST_F_START_NS, t);
    jst_rec_u64(r, JST_F_DUR_NS, dur);
    jst_rec_u64(r, JST_F_RESULT, 0);
}

static void ba_write(const char *path, unsigned long events)
{
    uint8_t buf[1024];
    struct jst_rec r;
    ba_w = jst_writer_open(path);
    if (!ba_w) {
        perror(path);
        exit(2);
    }
    uint64_t t = 1000000000ull;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_PROCESS);
    jst_rec_u64(&r, JST_F_PID, 4242);
    jst_rec_str(&r, JST_F_EXE, "/usr/bin/bench");
    jst_rec_u64(&r, JST_F_MONO_NS, t);
    jst_rec_u64(&r, JST_F_PROC_START_NS, t - 1000000);
    ba_emit(&r);
    uint64_t mod = 0;
    for (unsigned long i = 0; i < events; i++, t += 2000) {
        if (i % 1000 == 0) {
            mod = 0x100000 + i;
            int jit = i == 1000;
            ba_call(&r, buf, sizeof buf, JST_CALL_cuModuleLoadData, "cuModuleLoadData", t,
                    jit ? 50000000 : 200000);
            jst_rec_u64(&r, JST_F_HANDLE, mod);
            jst_rec_u64(&r, JST_F_IMAGE_KIND, JST_IMG_FATBIN);
            jst_rec_u64(&r, JST_F_IMAGE_SIZE, 7480);
            jst_rec_u64(&r, JST_F_IMAGE_HASH, 0x1234 + (jit ? 1 : 0));
            jst_rec_u64(&r, JST_F_TARGET_CC, 90);
            jst_rec_u64(&r, JST_F_VERDICT, jit ? JST_V_PTX_JIT : JST_V_SASS);
            jst_rec_str(&r, jit ? JST_F_JIT_FROM : JST_F_SASS_ARCH, jit ? "compute_75" : "sm_90");
            if (jit)
                jst_rec_u64(&r, JST_F_CACHE, JST_C_MISS_STORED);
        } else if (i % 2) {
            ba_call(&r, buf, sizeof buf, JST_CALL_cuModuleGetFunction, "cuModuleGetFunction", t,
                    300);
            jst_rec_u64(&r, JST_F_FUNC, 0x900000 + i);
            jst_rec_u64(&r, JST_F_PARENT, mod);
            jst_rec_str(&r, JST_F_NAME, "_Z6kernelPfi");
        } else {
            ba_call(&r, buf, sizeof buf, JST_CALL_cuLaunchKernel, "cuLaunchKernel", t, 4000);
            jst_rec_u64(&r, JST_F_FUNC, 0x900000 + i - 1);
            jst_rec_u64(&r, JST_F_PARENT, mod);
            jst_rec_str(&r, JST_F_NAME, "_Z6kernelPfi");
        }
        ba_emit(&r);
    }
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_END);
    jst_rec_u64(&r, JST_F_START_NS, t);
    jst_rec_u64(&r, JST_F_EVENTS, ba_seq);
    jst_rec_str(&r, JST_F_END_REASON, "exit");
    ba_emit(&r);
    if (jst_writer_close(ba_w) != 0) {
        fprintf(stderr, "bench_analyzer: close failed\n");
        exit(2);
    }
}

/* Runs argv with stdout to /dev/null; returns seconds, or -1. */
static double ba_time(char **argv)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    double t0 = ba_now_s();
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        return -1;
    posix_spawn_file_actions_destroy(&fa);
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return ba_now_s() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_analyzer JITSTALL_CLI [EVENTS]\n");
        return 2;
    }
    unsigned long events = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    char dir[] = "/tmp/bench_analyzer.XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    char path[64];
    snprintf(path, sizeof path, "%s/big.jst", dir);
    double t0 = ba_now_s();
    ba_write(path, events);
    double tw = ba_now_s() - t0;
    struct stat st;
    stat(path, &st);
    printf("analyzer throughput: synthetic trace of %lu events, %.1f MB compressed, written in "
           "%.2f s (%.2f M events/s through the writer)\n",
           events, st.st_size / 1e6, tw, events / tw / 1e6);
    char *rep[] = {argv[1], "report", "--json", path, NULL};
    char *dump[] = {argv[1], "dump", path, NULL};
    double best = 0;
    for (int i = 0; i < 3; i++) {
        double s = ba_time(rep);
        if (s < 0) {
            fprintf(stderr, "bench_analyzer: jitstall report failed\n");
            return 2;
        }
        if (best == 0 || s < best)
            best = s;
    }
    double sd = ba_time(dump);
    printf("  jitstall report --json: %.2f s (best of 3), %.2f M events/s; goal >= 1 M/s: %s\n",
           best, events / best / 1e6, events / best >= 1e6 ? "met" : "MISSED");
    if (sd > 0)
        printf("  jitstall dump:          %.2f s, %.2f M events/s\n", sd, events / sd / 1e6);
    unlink(path);
    rmdir(dir);
    return events / best >= 1e6 ? 0 : 1;
}
