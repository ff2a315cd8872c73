/*
 * Benchmark: what a stack capture costs the call it annotates. Measures
 * libunwind's unw_backtrace and glibc's backtrace() (the alternative: cheap
 * to set up, slow per capture) at several depths and the preload's real
 * jst_bt_capture() (interpose/backtrace.c and modmap.c compiled in: the
 * loader-counter check, unwind, own-frame skip, hash and table lookup of an
 * already-seen stack), and prints each in ns per
 * capture and as a share of a 2.4 ms SASS module load (measured on an H200), the
 * cheapest call that is ever captured. Run by hand: build-x/bench_unwind.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The real capture code (with its module-map check), the trace writer
 * replaced by a counter below. */
#include "../../interpose/backtrace.c"
#include "../../interpose/modmap.c"
/* libunwind as the preload gets it: dlopen'ed at the first driver call. */
#include "../../interpose/cost.c"
#include "../../interpose/lazylib.c"
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define BENCH_LOAD_NS 2400000.0 /* load of an image with sm_90 SASS (measured on an H200) */
#define BENCH_REPS 5

static unsigned long bench_records;
/* glibc's own backtrace(): libunwind, linked here, exports one too. */
static int (*bench_glibc_bt)(void **, int);

/* Stands in for the preload's writer: counts what would be written. */
int jst_emit(const struct jst_rec *r, int flush)
{
    (void)r;
    (void)flush;
    bench_records++;
    return 0;
}

/* No interpreter in this benchmark: Python frames are never read. */
int jst_py_maybe(void)
{
    return 0;
}

void jst_py_capture(const uint64_t *ips, size_t n_ips, struct jst_pyframes *py)
{
    (void)ips;
    (void)n_ips;
    py->n = py->len = 0;
}

static uint64_t bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The sink's state, clock and debug print, which the code above calls. */
_Atomic int jst_state;
int jst_debug_on;
uint64_t jst_now_ns(void)
{
    return bench_now();
}
void jst_dbg(const char *fmt, ...)
{
    (void)fmt;
}
void jst_note(int level, const char *msg)
{
    (void)level;
    (void)msg;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct bench_job {
    int kind;  /* 0: unw_backtrace, 1: jst_bt_capture, 2: glibc backtrace() */
    int depth; /* frames asked of unw_backtrace */
    int iters;
    double ns[BENCH_REPS];
    double first_ns; /* the very first run, before sorting */
    int frames;
    uint64_t id;
};

static void bench_run(struct bench_job *j)
{
    void *buf[BT_MAX_DEPTH + BT_MAX_SKIP];
    for (int r = 0; r < BENCH_REPS; r++) {
        uint64_t t0 = bench_now();
        for (int i = 0; i < j->iters; i++) {
            if (j->kind == 0)
                j->frames = unw_backtrace(buf, j->depth);
            else if (j->kind == 2)
                j->frames = bench_glibc_bt(buf, j->depth);
            else
                j->id = jst_bt_capture();
        }
        j->ns[r] = (double)(bench_now() - t0) / j->iters;
        if (r == 0)
            j->first_ns = j->ns[0];
    }
    qsort(j->ns, BENCH_REPS, sizeof j->ns[0], cmp_double);
}

/* Recurses to the wanted depth so that the captures see a realistic stack. */
__attribute__((noinline)) static void bench_at_depth(int left, struct bench_job *j)
{
    if (left > 0) {
        bench_at_depth(left - 1, j);
        __asm__ volatile("" ::: "memory"); /* keep the frame: no tail call */
        return;
    }
    bench_run(j);
}

static void bench_print(const char *what, const struct bench_job *j)
{
    double med = j->ns[BENCH_REPS / 2];
    printf("%-44s %8.0f ns  (min %6.0f)  %7.4f%% of a 2.4 ms load\n", what, med, j->ns[0],
           100.0 * med / BENCH_LOAD_NS);
}

int main(int argc, char **argv)
{
    int stack = argc > 1 ? atoi(argv[1]) : 24;
    int iters = argc > 2 ? atoi(argv[2]) : 20000;
    if (stack < 1 || stack > 200 || iters < 1) {
        fprintf(stderr, "usage: bench_unwind [stack-depth 1..200] [iterations]\n");
        return 2;
    }
    printf("bench_unwind: program stack of %d frames, %d captures x %d runs, median ns per "
           "capture\n",
           stack + 3, iters, BENCH_REPS);

    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    bench_glibc_bt = libc ? (int (*)(void **, int))dlsym(libc, "backtrace") : NULL;
    if (!bench_glibc_bt)
        bench_glibc_bt = backtrace;
    /* libunwind as the preload loads it, at the first driver call. */
    jst_lazylib_load();
    /* The first capture pays for libunwind's caches: timed once, alone. */
    struct bench_job cold = {.kind = 0, .depth = 64, .iters = 1};
    bench_at_depth(stack, &cold);
    printf("%-44s %8.0f ns  once per process: libunwind's caches, %.1f%% of one load\n",
           "cold unw_backtrace (first in the process)", cold.first_ns,
           100.0 * cold.first_ns / BENCH_LOAD_NS);

    static const int depths[] = {8, 16, 32, 64};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        struct bench_job j = {.kind = 0, .depth = depths[i], .iters = iters};
        bench_at_depth(stack, &j);
        char label[64];
        snprintf(label, sizeof label, "unw_backtrace max %d (got %d frames)", depths[i], j.frames);
        bench_print(label, &j);
    }

    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        struct bench_job j = {.kind = 2, .depth = depths[i], .iters = iters};
        bench_at_depth(stack, &j);
        char label[64];
        snprintf(label, sizeof label, "glibc backtrace max %d (got %d frames)", depths[i],
                 j.frames);
        bench_print(label, &j);
    }

    jst_modmap_initial(); /* as at trace open: the map, and the unwinder warmed */
    unsigned long map_records = bench_records;
    struct bench_job cap = {.kind = 1, .iters = iters};
    bench_at_depth(stack, &cap);
    char label[96];
    snprintf(label, sizeof label, "jst_bt_capture (seen stack, depth %d)", bt_depth);
    bench_print(label, &cap);
    printf("records written: %lu module map, %lu stack (id %llu); budget: well under 1%% of "
           "the call\n",
           map_records, bench_records - map_records, (unsigned long long)cap.id);
    return cap.id ? 0 : 1;
}
