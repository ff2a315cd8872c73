/*
 * Unit tests for the trace writer and reader (common/trace_write.c,
 * common/trace_read.c) and the name tables (common/names.c): round trips,
 * overflow, truncation at every byte, damaged and foreign files, threads,
 * fork, and a process killed with SIGKILL mid-trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "trace.h"

static char tmpdir[64];

static int setup_dir(void **state)
{
    strcpy(tmpdir, "/tmp/jst_test_trace_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int remove_dir(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
    unlink(out);
}

static void write_file(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    uint8_t *p = malloc((size_t)st.st_size + 1);
    assert_non_null(p);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, p, (size_t)st.st_size), st.st_size);
    close(fd);
    *n = (size_t)st.st_size;
    return p;
}

/* A header as the writer would make it, with chosen fields. */
static void make_header(uint8_t *h, uint16_t version, uint16_t compat, uint32_t endian,
                        uint32_t hsize, uint32_t flags)
{
    memset(h, 0, JST_HEADER_SIZE);
    memcpy(h, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN);
    h[8] = (uint8_t)version, h[9] = (uint8_t)(version >> 8);
    h[10] = (uint8_t)compat, h[11] = (uint8_t)(compat >> 8);
    for (int i = 0; i < 4; i++) {
        h[12 + i] = (uint8_t)(endian >> (8 * i));
        h[16 + i] = (uint8_t)(hsize >> (8 * i));
        h[20 + i] = (uint8_t)(flags >> (8 * i));
    }
}

/* One decoded record, copied out of the reader. */
struct rec_copy {
    uint16_t type;
    uint32_t len;
    uint8_t *payload;
};

struct read_result {
    struct rec_copy *recs;
    size_t n;
    int rc; /* last jst_reader_next() result */
    int truncated;
    unsigned damaged; /* damaged spans skipped (version 2) */
    char err[256];
    int opened;
};

static void read_all(const char *path, struct read_result *res)
{
    memset(res, 0, sizeof(*res));
    struct jst_reader *rd = jst_reader_open(path, res->err, sizeof(res->err));
    if (!rd)
        return;
    res->opened = 1;
    struct jst_record rec;
    size_t cap = 0;
    while ((res->rc = jst_reader_next(rd, &rec)) == 1) {
        if (res->n == cap) {
            cap = cap ? cap * 2 : 64;
            res->recs = realloc(res->recs, cap * sizeof(*res->recs));
            assert_non_null(res->recs);
        }
        struct rec_copy *c = &res->recs[res->n++];
        c->type = rec.type;
        c->len = rec.len;
        c->payload = malloc(rec.len + 1);
        memcpy(c->payload, rec.payload, rec.len);
    }
    res->truncated = jst_reader_truncated(rd);
    res->damaged = jst_reader_damaged(rd);
    if (res->damaged)
        snprintf(res->err, sizeof(res->err), "%s", jst_reader_damage(rd));
    if (res->rc < 0)
        snprintf(res->err, sizeof(res->err), "%s", jst_reader_error(rd));
    jst_reader_close(rd);
}

static void free_result(struct read_result *res)
{
    for (size_t i = 0; i < res->n; i++)
        free(res->recs[i].payload);
    free(res->recs);
    memset(res, 0, sizeof(*res));
}

static uint64_t rec_u64(const struct rec_copy *c, uint16_t key)
{
    struct jst_record r = {c->type, 0, c->len, c->payload};
    uint64_t v = 0;
    assert_true(jst_rec_get_u64(&r, key, &v));
    return v;
}

static int emit_call(struct jst_writer *w, uint64_t seq, uint64_t tid, int flush)
{
    uint8_t buf[256];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_CALL);
    jst_rec_u64(&r, JST_F_CALL_ID, JST_CALL_cuModuleLoadData);
    jst_rec_str(&r, JST_F_CALL, "cuModuleLoadData");
    jst_rec_u64(&r, JST_F_SEQ, seq);
    jst_rec_u64(&r, JST_F_TID, tid);
    jst_rec_u64(&r, JST_F_START_NS, 1000 * seq);
    jst_rec_u64(&r, JST_F_DUR_NS, 7);
    jst_rec_u64(&r, JST_F_RESULT, 0);
    return jst_writer_emit(w, &r, flush);
}

static int emit_end(struct jst_writer *w)
{
    uint8_t buf[64];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_END);
    jst_rec_i64(&r, JST_F_EXIT_STATUS, 0);
    jst_rec_str(&r, JST_F_END_REASON, "exit");
    return jst_writer_emit(w, &r, 1);
}

/* A complete trace: n call records (each flushed), then END. */
static void write_sample(const char *path, unsigned n)
{
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(emit_call(w, i, 42, 1), 0);
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_close(w), 0);
}

/* The preload ends its trace at exit while other threads may still hold the
 * writer: jst_writer_finish ends the stream, refuses what comes later with -1
 * (no write into a closed or reused fd), and leaves a complete trace. */
static void test_finish_refuses_later_records(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof(path), "finish.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_call(w, 0, 42, 1), 0);
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_finish(w), 0);
    assert_int_equal(emit_call(w, 1, 42, 1), -1);
    assert_int_equal(jst_writer_finish(w), -1);
    char err[256];
    struct jst_reader *rd = jst_reader_open(path, err, sizeof(err));
    assert_non_null(rd);
    struct jst_record rec;
    int n = 0, rc;
    while ((rc = jst_reader_next(rd, &rec)) == 1)
        n++;
    assert_int_equal(rc, 0);
    assert_int_equal(n, 2);
    assert_false(jst_reader_truncated(rd));
    jst_reader_close(rd);
    /* The preload never frees it; a test may, and close says it was over. */
    assert_int_equal(jst_writer_close(w), -1);
}

/* ---- round trips ---- */

static void test_round_trip_every_field_kind(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "kinds.jst");
    static const uint8_t blob[] = {0x00, 0xff, 0x10, 0x00, 0x7f};
    uint64_t ips[3] = {0x401000, 0x7f0000001234ull, 0xffffffffffffffffull};
    uint8_t buf[1024];
    struct jst_rec r;

    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_PROCESS);
    jst_rec_u64(&r, JST_F_PID, UINT64_MAX);
    jst_rec_i64(&r, JST_F_EXIT_STATUS, -5);
    jst_rec_str(&r, JST_F_HOST, "h\xc3\xa9st\n");
    jst_rec_str(&r, JST_F_CWD, "");
    jst_rec_strn(&r, JST_F_EXE, "/bin/truexxx", 9);
    jst_rec_bytes(&r, JST_F_BUILD_ID, blob, sizeof(blob));
    jst_rec_bytes(&r, JST_F_IPS, ips, sizeof(ips));
    jst_rec_bytes(&r, JST_F_SOURCE, NULL, 0);
    jst_rec_str(&r, JST_F_ARG, "prog");
    jst_rec_str(&r, JST_F_ARG, "--x");
    jst_rec_str(&r, JST_F_ARG, "last");
    jst_rec_str(&r, JST_F_PATH, NULL); /* omitted */
    assert_false(r.overflow);
    assert_int_equal(jst_writer_emit(w, &r, 0), 0);
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_close(w), 0);

    struct jst_reader *rd = jst_reader_open(path, NULL, 0);
    assert_non_null(rd);
    assert_int_equal(jst_reader_version(rd), JST_FORMAT_VERSION);
    struct jst_record rec;
    assert_int_equal(jst_reader_next(rd, &rec), 1);
    assert_int_equal(rec.type, JST_REC_PROCESS);
    assert_int_equal(rec.flags, 0);
    assert_int_equal(rec.len, r.len - JST_REC_HDR_SIZE);
    assert_memory_equal(rec.payload, buf + JST_REC_HDR_SIZE, rec.len);

    struct jst_field_iter it;
    struct jst_field f;
    jst_fields_begin(&it, &rec);
    struct {
        uint16_t key;
        uint8_t kind;
        uint64_t u64;
        const void *data;
        uint32_t len;
    } want[] = {
        {JST_F_PID, JST_K_U64, UINT64_MAX, NULL, 0},
        {JST_F_EXIT_STATUS, JST_K_I64, (uint64_t)-5, NULL, 0},
        {JST_F_HOST, JST_K_STR, 0, "h\xc3\xa9st\n", 6},
        {JST_F_CWD, JST_K_STR, 0, "", 0},
        {JST_F_EXE, JST_K_STR, 0, "/bin/true", 9},
        {JST_F_BUILD_ID, JST_K_BYTES, 0, blob, sizeof(blob)},
        {JST_F_IPS, JST_K_BYTES, 0, ips, sizeof(ips)},
        {JST_F_SOURCE, JST_K_BYTES, 0, "", 0},
        {JST_F_ARG, JST_K_STR, 0, "prog", 4},
        {JST_F_ARG, JST_K_STR, 0, "--x", 3},
        {JST_F_ARG, JST_K_STR, 0, "last", 4},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_int_equal(jst_fields_next(&it, &f), 1);
        assert_int_equal(f.key, want[i].key);
        assert_int_equal(f.kind, want[i].kind);
        if (want[i].data) {
            assert_int_equal(f.len, want[i].len);
            assert_memory_equal(f.data, want[i].data, f.len);
        } else {
            assert_true(f.u64 == want[i].u64);
        }
    }
    assert_int_equal(jst_fields_next(&it, &f), 0);
    assert_false(it.bad);

    uint64_t v;
    const char *s;
    uint32_t n;
    assert_true(jst_rec_get_u64(&rec, JST_F_EXIT_STATUS, &v));
    assert_int_equal((int64_t)v, -5);
    assert_true(jst_rec_get_str(&rec, JST_F_ARG, &s, &n)); /* first of the repeats */
    assert_int_equal(n, 4);
    assert_memory_equal(s, "prog", 4);
    assert_false(jst_rec_get_u64(&rec, JST_F_PATH, &v));
    assert_false(jst_rec_get_str(&rec, JST_F_PATH, &s, &n));
    assert_false(jst_rec_get_u64(&rec, JST_F_HOST, &v)); /* a string is not a u64 */

    assert_int_equal(jst_reader_next(rd, &rec), 1);
    assert_int_equal(rec.type, JST_REC_END);
    assert_int_equal(jst_reader_next(rd, &rec), 0);
    assert_false(jst_reader_truncated(rd));
    jst_reader_close(rd);
}

static void test_many_records_span_read_buffers(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "big.jst");
    /* Records of up to 300 KB cross the reader's 128 KB buffers. */
    size_t cap = 400 << 10;
    uint8_t *buf = malloc(cap), *blob = malloc(cap);
    for (size_t i = 0; i < cap; i++)
        blob[i] = (uint8_t)(i * 2654435761u >> 13);
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    for (unsigned i = 0; i < 40; i++) {
        struct jst_rec r;
        jst_rec_begin(&r, buf, cap, JST_REC_STACK);
        jst_rec_u64(&r, JST_F_STACK_ID, i);
        jst_rec_bytes(&r, JST_F_IPS, blob + i, (i * 7919u) % (300u << 10));
        assert_int_equal(jst_writer_emit(w, &r, i % 3 == 0), 0);
    }
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_close(w), 0);

    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 41);
    assert_false(res.truncated);
    for (unsigned i = 0; i < 40; i++) {
        struct jst_record rec = {res.recs[i].type, 0, res.recs[i].len, res.recs[i].payload};
        const char *s;
        uint32_t n;
        assert_int_equal(rec_u64(&res.recs[i], JST_F_STACK_ID), i);
        assert_true(jst_rec_get_str(&rec, JST_F_IPS, &s, &n));
        assert_int_equal(n, (i * 7919u) % (300u << 10));
        assert_memory_equal(s, blob + i, n);
    }
    free_result(&res);
    free(buf);
    free(blob);
}

/* ---- the record builder ---- */

static void test_overflow_sets_flag_and_writer_refuses(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "overflow.jst");
    uint8_t buf[32];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_NOTE);
    jst_rec_u64(&r, JST_F_LEVEL, 1); /* 8 + 11 = 19 bytes: fits */
    assert_false(r.overflow);
    assert_int_equal(r.len, 19);
    jst_rec_str(&r, JST_F_MESSAGE, "this message does not fit in 32 bytes");
    assert_true(r.overflow);
    assert_int_equal(r.len, 19);
    jst_rec_u64(&r, JST_F_LEVEL, 2); /* would fit, but the record is already spoiled */
    assert_int_equal(r.len, 19);

    struct jst_rec tiny;
    jst_rec_begin(&tiny, buf, 4, JST_REC_NOTE);
    assert_true(tiny.overflow);

    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(jst_writer_emit(w, &r, 1), -1);
    assert_int_equal(jst_writer_emit(w, &tiny, 1), -1);
    /* The stream is intact: later records still go through. */
    assert_int_equal(emit_call(w, 1, 1, 1), 0);
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_close(w), 0);

    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.n, 2);
    assert_int_equal(res.recs[0].type, JST_REC_CALL);
    assert_int_equal(res.recs[1].type, JST_REC_END);
    free_result(&res);
}

/* ---- the writer ---- */

static void test_writer_creates_exclusive_private_file(void **state)
{
    char path[128], link[128];
    tmp_path(path, sizeof(path), "excl.jst");
    tmp_path(link, sizeof(link), "link.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(jst_writer_close(w), 0);

    errno = 0;
    assert_null(jst_writer_open(path));
    assert_int_equal(errno, EEXIST);

    char target[128];
    tmp_path(target, sizeof(target), "target-not-there");
    assert_int_equal(symlink(target, link), 0);
    assert_null(jst_writer_open(link));
    assert_int_not_equal(access(target, F_OK), 0); /* nothing created through the link */
}

static void test_writer_preserves_errno(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "errno.jst");
    errno = 1234;
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(errno, 1234);
    assert_int_equal(emit_call(w, 0, 0, 1), 0);
    assert_int_equal(errno, 1234);
    assert_int_equal(emit_call(w, 1, 0, 0), 0);
    assert_int_equal(errno, 1234);
    assert_int_equal(jst_writer_close(w), 0);
    assert_int_equal(errno, 1234);
}

static void test_flush_puts_each_record_on_disk(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "flush.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    for (unsigned k = 1; k <= 10; k++) {
        assert_int_equal(emit_call(w, k, 7, 1), 0);
        /* The writer is still open: what is on disk now must hold all k. */
        struct read_result res;
        read_all(path, &res);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, k);
        assert_true(res.truncated);
        assert_int_equal(rec_u64(&res.recs[k - 1], JST_F_SEQ), k);
        free_result(&res);
    }
    assert_int_equal(jst_writer_close(w), 0);
}

/* The encoding byte of each block of a version 2 file, in order. */
static size_t block_encodings(const char *path, uint8_t *enc, size_t cap)
{
    size_t n = 0, k = 0;
    uint8_t *d = slurp(path, &n);
    assert_non_null(d);
    for (size_t o = 32; o + JST_BLOCK_HDR_SIZE <= n && k < cap; k++) {
        uint32_t stored = (uint32_t)d[o + 8] | (uint32_t)d[o + 9] << 8 | (uint32_t)d[o + 10] << 16 |
                          (uint32_t)d[o + 11] << 24;
        enc[k] = d[o + 16];
        o += JST_BLOCK_HDR_SIZE + stored;
    }
    free(d);
    return k;
}

/* A block of a few flushed records is stored plain (zstd's per-frame set-up
 * costs more than it saves there); a full, compressible one is zstd. */
static void test_small_blocks_plain_large_compressed(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof(path), "enc.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_call(w, 1, 7, 1), 0); /* one record, flushed */
    for (unsigned k = 2; k < 400; k++)          /* ~20 KiB of alike records */
        assert_int_equal(emit_call(w, k, 7, 0), 0);
    assert_int_equal(jst_writer_close(w), 0);
    uint8_t enc[16];
    size_t nb = block_encodings(path, enc, 16);
    assert_true(nb >= 2);
    assert_int_equal(enc[0], JST_BLOCK_ENC_PLAIN);
    assert_int_equal(enc[nb - 1], JST_BLOCK_ENC_ZSTD);
    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 399);
    free_result(&res);
}

struct thread_arg {
    struct jst_writer *w;
    unsigned tid;
};

#define THREADS 4
#define PER_THREAD 500

static void *emit_thread(void *p)
{
    struct thread_arg *a = p;
    for (unsigned i = 0; i < PER_THREAD; i++)
        if (emit_call(a->w, i, a->tid, i % 2) != 0)
            return (void *)1;
    return NULL;
}

static void test_threads_emit_concurrently(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "threads.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    pthread_t th[THREADS];
    struct thread_arg args[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        args[t] = (struct thread_arg){w, t};
        assert_int_equal(pthread_create(&th[t], NULL, emit_thread, &args[t]), 0);
    }
    for (unsigned t = 0; t < THREADS; t++) {
        void *ret;
        pthread_join(th[t], &ret);
        assert_null(ret);
    }
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_close(w), 0);

    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.rc, 0);
    assert_false(res.truncated);
    assert_int_equal(res.n, THREADS * PER_THREAD + 1);
    unsigned next[THREADS] = {0};
    for (size_t i = 0; i + 1 < res.n; i++) {
        uint64_t tid = rec_u64(&res.recs[i], JST_F_TID);
        assert_true(tid < THREADS);
        /* Each thread's records appear whole and in its own order. */
        assert_int_equal(rec_u64(&res.recs[i], JST_F_SEQ), next[tid]);
        next[tid]++;
    }
    for (unsigned t = 0; t < THREADS; t++)
        assert_int_equal(next[t], PER_THREAD);
    free_result(&res);
}

static void test_abandon_in_child_leaves_parent_stream_alone(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "fork.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_call(w, 0, 1, 1), 0);
    assert_int_equal(emit_call(w, 1, 1, 0), 0); /* buffered in the compressor */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        jst_writer_abandon(w);
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(emit_call(w, 2, 1, 1), 0);
    assert_int_equal(emit_end(w), 0);
    assert_int_equal(jst_writer_close(w), 0);

    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.rc, 0);
    assert_false(res.truncated);
    assert_int_equal(res.n, 4);
    for (unsigned i = 0; i < 3; i++)
        assert_int_equal(rec_u64(&res.recs[i], JST_F_SEQ), i);
    free_result(&res);
}

/* A child writes K flushed records, tells the parent, and goes on writing
 * unflushed ones until the parent kills it with SIGKILL. */
static void test_sigkill_leaves_readable_trace(void **state)
{
    enum { K = 25 };
    char path[128];
    tmp_path(path, sizeof(path), "killed.jst");
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60); /* never outlive a parent whose assertion failed */
        close(pfd[0]);
        struct jst_writer *w = jst_writer_open(path);
        if (!w)
            _exit(3);
        for (unsigned i = 0; i < K; i++)
            if (emit_call(w, i, 9, 1) != 0)
                _exit(4);
        if (write(pfd[1], "k", 1) != 1)
            _exit(5);
        for (unsigned i = K;; i++) {
            emit_call(w, i, 9, 0);
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    close(pfd[1]);
    char c;
    assert_int_equal(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    struct read_result res;
    read_all(path, &res);
    assert_true(res.opened);
    assert_int_equal(res.rc, 0);
    assert_true(res.truncated);
    assert_true(res.n >= K);
    for (unsigned i = 0; i < res.n; i++) {
        assert_int_equal(res.recs[i].type, JST_REC_CALL);
        assert_int_equal(rec_u64(&res.recs[i], JST_F_SEQ), i);
    }
    free_result(&res);
}

/* ---- the reader on damaged and foreign input ---- */

static void test_truncated_at_every_offset(void **state)
{
    char full[128], cut[128];
    tmp_path(full, sizeof(full), "full.jst");
    tmp_path(cut, sizeof(cut), "cut.jst");
    write_sample(full, 20);
    size_t size;
    uint8_t *bytes = slurp(full, &size);
    struct read_result whole;
    read_all(full, &whole);
    assert_int_equal(whole.n, 21);
    assert_false(whole.truncated);

    size_t last_n = 0;
    for (size_t len = 0; len <= size; len++) {
        write_file(cut, bytes, len);
        struct read_result res;
        read_all(cut, &res);
        if (len < JST_HEADER_SIZE) {
            assert_false(res.opened);
            assert_true(res.err[0] != '\0');
            continue;
        }
        assert_true(res.opened);
        assert_int_equal(res.rc, 0); /* a cut is never an error */
        assert_int_equal(res.truncated, len < size);
        assert_true(res.n <= whole.n);
        assert_true(res.n >= last_n); /* more bytes never lose records */
        last_n = res.n;
        for (size_t i = 0; i < res.n; i++) {
            assert_int_equal(res.recs[i].type, whole.recs[i].type);
            assert_int_equal(res.recs[i].len, whole.recs[i].len);
            assert_memory_equal(res.recs[i].payload, whole.recs[i].payload, res.recs[i].len);
        }
        free_result(&res);
    }
    assert_int_equal(last_n, whole.n);
    free_result(&whole);
    free(bytes);
}

static void test_no_end_record_is_truncated(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "noend.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_call(w, 0, 1, 0), 0);
    assert_int_equal(jst_writer_close(w), 0); /* frame complete, but no END */
    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 1);
    assert_true(res.truncated);
    free_result(&res);

    /* Header only: no records at all. */
    uint8_t h[JST_HEADER_SIZE];
    make_header(h, 1, 1, JST_ENDIAN_MARK, JST_HEADER_SIZE, JST_FILE_FLAG_ZSTD);
    write_file(path, h, sizeof(h));
    read_all(path, &res);
    assert_true(res.opened);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 0);
    assert_true(res.truncated);
    free_result(&res);
}

static void test_garbage_after_header_is_an_error(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "garbage.jst");
    uint8_t f[JST_HEADER_SIZE + 200];
    make_header(f, 1, 1, JST_ENDIAN_MARK, JST_HEADER_SIZE, JST_FILE_FLAG_ZSTD);
    for (size_t i = JST_HEADER_SIZE; i < sizeof(f); i++)
        f[i] = (uint8_t)(i * 37 + 11);
    write_file(path, f, sizeof(f));
    struct read_result res;
    read_all(path, &res);
    assert_true(res.opened);
    assert_int_equal(res.rc, -1);
    assert_int_equal(res.n, 0);
    assert_non_null(strstr(res.err, "damaged compressed data"));
    free_result(&res);
}

static void test_garbage_after_records_keeps_records(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "tail.jst");
    write_sample(path, 5);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    uint8_t junk[64];
    memset(junk, 0xA5, sizeof(junk));
    assert_int_equal(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
    close(fd);
    struct read_result res;
    read_all(path, &res);
    /* Version 2: the junk is a damaged span after the last block; every
     * record is kept and reading ends normally. */
    assert_int_equal(res.n, 6);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.damaged, 1);
    assert_non_null(strstr(res.err, "no block header there"));
    free_result(&res);
}

static void test_oversized_payload_is_damage(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "huge.jst");
    /* Uncompressed stream (flags 0): one good empty record, then a header
     * announcing a payload over JST_REC_MAX_PAYLOAD. */
    uint8_t f[JST_HEADER_SIZE + 16] = {0};
    make_header(f, 1, 1, JST_ENDIAN_MARK, JST_HEADER_SIZE, 0);
    uint8_t *p = f + JST_HEADER_SIZE;
    p[0] = JST_REC_NOTE;
    p[8] = JST_REC_NOTE;
    p[12] = 0xff, p[13] = 0xff, p[14] = 0xff, p[15] = 0x7f;
    write_file(path, f, sizeof(f));
    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.n, 1);
    assert_int_equal(res.rc, -1);
    assert_non_null(strstr(res.err, "damaged record"));
    free_result(&res);
}

static void test_wrong_magic_is_refused(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "magic.jst");
    uint8_t h[JST_HEADER_SIZE];
    make_header(h, 1, 1, JST_ENDIAN_MARK, JST_HEADER_SIZE, JST_FILE_FLAG_ZSTD);
    h[0] = 'X';
    write_file(path, h, sizeof(h));
    char err[128];
    assert_null(jst_reader_open(path, err, sizeof(err)));
    assert_string_equal(err, "not a jitstall trace (bad magic)");

    write_file(path, "", 0);
    assert_null(jst_reader_open(path, err, sizeof(err)));
    assert_string_equal(err, "not a jitstall trace (bad magic)");

    tmp_path(path, sizeof(path), "missing.jst");
    assert_null(jst_reader_open(path, err, sizeof(err)));
    assert_non_null(strstr(err, "No such file"));
}

static void test_newer_format_is_refused_with_both_versions(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "newer.jst");
    uint8_t h[JST_HEADER_SIZE];
    make_header(h, 4, 3, JST_ENDIAN_MARK, JST_HEADER_SIZE, JST_FILE_FLAG_ZSTD);
    write_file(path, h, sizeof(h));
    char err[160];
    assert_null(jst_reader_open(path, err, sizeof(err)));
    char want[160];
    snprintf(want, sizeof(want),
             "trace format version 4 needs a newer jitstall (reader supports up to %d)",
             JST_FORMAT_VERSION);
    assert_string_equal(err, want);

    /* A newer writer that old readers can still read: accepted. */
    make_header(h, 3, 2, JST_ENDIAN_MARK, JST_HEADER_SIZE, JST_FILE_FLAG_BLOCKS);
    write_file(path, h, sizeof(h));
    struct jst_reader *rd = jst_reader_open(path, err, sizeof(err));
    assert_non_null(rd);
    assert_int_equal(jst_reader_version(rd), 3);
    jst_reader_close(rd);
}

static void test_byte_swapped_and_bad_header_fields(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "swapped.jst");
    uint8_t h[JST_HEADER_SIZE];
    char err[128];
    make_header(h, 1, 1, __builtin_bswap32(JST_ENDIAN_MARK), JST_HEADER_SIZE, 1);
    write_file(path, h, sizeof(h));
    assert_null(jst_reader_open(path, err, sizeof(err)));
    assert_string_equal(err, "byte-swapped trace, not supported");

    make_header(h, 1, 1, JST_ENDIAN_MARK, 16, 1);
    write_file(path, h, sizeof(h));
    assert_null(jst_reader_open(path, err, sizeof(err)));
    assert_non_null(strstr(err, "header size 16"));

    write_file(path, h, 20);
    assert_null(jst_reader_open(path, err, sizeof(err)));
    assert_non_null(strstr(err, "truncated header"));
}

static void test_longer_header_and_unknown_records_are_skipped(void **state)
{
    char path[128];
    tmp_path(path, sizeof(path), "longer.jst");
    /* A future writer with a 48-byte header and an unknown record type and
     * key, uncompressed: this reader must read through all of it. */
    uint8_t f[48 + 8 + 11 + 8] = {0};
    make_header(f, 1, 1, JST_ENDIAN_MARK, 48, 0);
    uint8_t *p = f + 48;
    p[0] = 200, p[4] = 11;               /* type 200, payload 11 */
    p[8] = 0x0f, p[9] = 0x27, p[10] = 1; /* key 9999, U64 */
    p[11] = 5;
    p += 8 + 11;
    p[0] = JST_REC_END;
    write_file(path, f, sizeof(f));
    struct read_result res;
    read_all(path, &res);
    assert_int_equal(res.rc, 0);
    assert_false(res.truncated);
    assert_int_equal(res.n, 2);
    assert_int_equal(res.recs[0].type, 200);
    assert_int_equal(rec_u64(&res.recs[0], 9999), 5);
    assert_null(jst_rec_type_name(200));
    assert_null(jst_key_name(9999));
    free_result(&res);
}

static void test_field_lengths_checked_against_payload(void **state)
{
    struct jst_field_iter it;
    struct jst_field f;
    /* A U64 field cut short. */
    uint8_t short_u64[] = {1, 0, JST_K_U64, 1, 2, 3};
    struct jst_record rec = {JST_REC_CALL, 0, sizeof(short_u64), short_u64};
    jst_fields_begin(&it, &rec);
    assert_int_equal(jst_fields_next(&it, &f), 0);
    assert_true(it.bad);

    /* A string claiming more bytes than remain, after one good field. */
    uint8_t long_str[] = {2, 0, JST_K_U64, 9,         0,    0,    0,    0,    0,  0,
                          0, 6, 0,         JST_K_STR, 0xff, 0xff, 0xff, 0xff, 'a'};
    rec.payload = long_str;
    rec.len = sizeof(long_str);
    jst_fields_begin(&it, &rec);
    assert_int_equal(jst_fields_next(&it, &f), 1);
    assert_int_equal(f.u64, 9);
    assert_int_equal(jst_fields_next(&it, &f), 0);
    assert_true(it.bad);
    assert_int_equal(jst_fields_next(&it, &f), 0); /* stays stopped */
    const char *s;
    uint32_t n;
    assert_false(jst_rec_get_str(&rec, JST_F_CALL, &s, &n));

    /* An unknown kind cannot be skipped. */
    uint8_t odd_kind[] = {1, 0, 99, 0, 0};
    rec.payload = odd_kind;
    rec.len = sizeof(odd_kind);
    jst_fields_begin(&it, &rec);
    assert_int_equal(jst_fields_next(&it, &f), 0);
    assert_true(it.bad);

    /* A dangling key with no kind byte. */
    rec.len = 2;
    jst_fields_begin(&it, &rec);
    assert_int_equal(jst_fields_next(&it, &f), 0);
    assert_true(it.bad);
}

/* ---- names ---- */

static void test_names(void **state)
{
    assert_string_equal(jst_rec_type_name(JST_REC_CALL), "call");
    assert_string_equal(jst_rec_type_name(JST_REC_CACHE_STATE), "cache_state");
    assert_string_equal(jst_rec_type_name(JST_REC_END), "end");
    assert_null(jst_rec_type_name(0));
    assert_string_equal(jst_key_name(JST_F_START_NS), "start_ns");
    assert_string_equal(jst_key_name(JST_F_CALL), "call");
    assert_string_equal(jst_key_name(JST_F_TID), "tid");
    assert_string_equal(jst_key_name(JST_F_DUR_NS), "dur_ns");
    assert_string_equal(jst_key_name(JST_F_RESULT), "result");
    assert_string_equal(jst_key_name(JST_F_CUPTI_LOAD_SEQ), "cupti_load_seq");
    assert_string_equal(jst_key_name(JST_F_LEVEL), "level");
    assert_null(jst_key_name(0));
    assert_null(jst_key_name(15));
    assert_string_equal(jst_key_name(JST_F_SELF_NS), "self_ns");
    assert_string_equal(jst_key_name(JST_F_RANGE_OP), "range_op");
    assert_string_equal(jst_rec_type_name(JST_REC_BEGIN), "begin");
    assert_string_equal(jst_rec_type_name(JST_REC_RANGE), "range");
    assert_string_equal(jst_range_op_name(JST_RANGE_POP), "pop");
    assert_null(jst_range_op_name(0));
    assert_null(jst_key_name(65535));
    assert_string_equal(jst_call_name(JST_CALL_cuModuleLoadData), "cuModuleLoadData");
    assert_string_equal(jst_call_name(JST_CALL_cuLibraryUnload), "cuLibraryUnload");
    assert_null(jst_call_name(0));
    assert_null(jst_call_name(JST_CALL_MAX_));
    assert_string_equal(jst_verdict_name(JST_V_PTX_JIT), "ptx_jit");
    assert_string_equal(jst_verdict_name(JST_V_DAMAGED), "damaged");
    assert_string_equal(jst_cache_name(JST_C_MISS_NOT_STORED), "miss_not_stored");
    assert_string_equal(jst_cache_reason_name(JST_CR_TOO_SMALL), "too_small");
    assert_string_equal(jst_image_kind_name(JST_IMG_FATBIN_WRAPPER), "fatbin_wrapper");
    assert_string_equal(jst_route_name(JST_ROUTE_PROCADDR), "procaddr");
    assert_string_equal(jst_cupti_op_name(JST_CUPTI_CACHE_STORE), "cache_store");
    assert_string_equal(jst_mod_event_name(JST_MOD_DLCLOSE), "dlclose");
    assert_null(jst_verdict_name(1000));

    /* Every call number below JST_CALL_MAX_ has a name, and key names are
     * distinct lowercase snake_case (they are JSON member names). */
    for (unsigned c = 1; c < JST_CALL_MAX_; c++)
        assert_non_null(jst_call_name(c));
    for (unsigned t = 1; t < JST_REC_TYPE_MAX_; t++)
        if (t <= JST_REC_FW_CACHE || t == JST_REC_READY) /* 16..23: not assigned here */
            assert_non_null(jst_rec_type_name((uint16_t)t));
    assert_string_equal(jst_rec_type_name(JST_REC_READY), "ready");
    assert_string_equal(jst_key_name(JST_F_READY_SPEC), "ready_spec");
    for (unsigned a = 0; a < 65536; a++) {
        const char *na = jst_key_name((uint16_t)a);
        if (!na)
            continue;
        for (const char *q = na; *q; q++)
            assert_true((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_');
        for (unsigned b = a + 1; b < 256; b++) {
            const char *nb = jst_key_name((uint16_t)b);
            if (nb)
                assert_string_not_equal(na, nb);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_field_kind),
        cmocka_unit_test(test_many_records_span_read_buffers),
        cmocka_unit_test(test_overflow_sets_flag_and_writer_refuses),
        cmocka_unit_test(test_writer_creates_exclusive_private_file),
        cmocka_unit_test(test_writer_preserves_errno),
        cmocka_unit_test(test_flush_puts_each_record_on_disk),
        cmocka_unit_test(test_small_blocks_plain_large_compressed),
        cmocka_unit_test(test_threads_emit_concurrently),
        cmocka_unit_test(test_abandon_in_child_leaves_parent_stream_alone),
        cmocka_unit_test(test_sigkill_leaves_readable_trace),
        cmocka_unit_test(test_truncated_at_every_offset),
        cmocka_unit_test(test_no_end_record_is_truncated),
        cmocka_unit_test(test_garbage_after_header_is_an_error),
        cmocka_unit_test(test_garbage_after_records_keeps_records),
        cmocka_unit_test(test_oversized_payload_is_damage),
        cmocka_unit_test(test_wrong_magic_is_refused),
        cmocka_unit_test(test_newer_format_is_refused_with_both_versions),
        cmocka_unit_test(test_byte_swapped_and_bad_header_fields),
        cmocka_unit_test(test_longer_header_and_unknown_records_are_skipped),
        cmocka_unit_test(test_field_lengths_checked_against_payload),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_finish_refuses_later_records),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
