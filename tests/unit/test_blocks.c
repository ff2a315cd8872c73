/*
 * Unit tests of trace format version 2 (common/trace_write.c,
 * common/trace_read.c): checksummed blocks, recovery after damage at any
 * byte, version 1 traces still read, and a writer whose descriptor the
 * program closes or takes over.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "trace.h"

static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/jst-blocks-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void spit(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Record i: a note whose seq is i and whose message has some bulk, varied
 * enough that blocks do not compress to nothing. */
static int emit_note(struct jst_writer *w, uint64_t i, size_t bulk, int flush)
{
    uint8_t buf[4096];
    char msg[2048];
    uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
    size_t k = (size_t)snprintf(msg, sizeof(msg), "record %llu ", (unsigned long long)i);
    for (; k < bulk && k < sizeof(msg) - 1; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        msg[k] = (char)('a' + x % 26);
    }
    msg[k] = 0;
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_NOTE);
    jst_rec_u64(&r, JST_F_SEQ, i);
    jst_rec_str(&r, JST_F_MESSAGE, msg);
    return jst_writer_emit(w, &r, flush);
}

/* Writes n notes, a block ending after every per-th one, then END. */
static void write_notes(const char *path, uint64_t n, unsigned per, size_t bulk)
{
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(emit_note(w, i, bulk, (i + 1) % per == 0), 0);
    uint8_t buf[64];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_END);
    jst_rec_u64(&r, JST_F_EVENTS, n);
    assert_int_equal(jst_writer_emit(w, &r, 1), 0);
    assert_int_equal(jst_writer_close(w), 0);
}

struct got {
    uint64_t n, bad; /* records read; records whose content is wrong */
    uint8_t *seen;   /* seen[i]: note i was read */
    unsigned damaged;
    int rc, truncated, end;
    char damage[512];
};

/* Reads a trace of notes, checking that every note read is exactly the one
 * written (so nothing from a damaged block leaks out). */
static void read_notes(const char *path, uint64_t n, size_t bulk, struct got *g)
{
    memset(g, 0, sizeof(*g));
    g->seen = calloc(n + 1, 1);
    char err[256];
    struct jst_reader *rd = jst_reader_open(path, err, sizeof(err));
    assert_non_null(rd);
    struct jst_record rec;
    while ((g->rc = jst_reader_next(rd, &rec)) == 1) {
        uint64_t seq;
        const char *msg;
        uint32_t len;
        if (rec.type == JST_REC_END) {
            g->end = 1;
            continue;
        }
        if (rec.type != JST_REC_NOTE || !jst_rec_get_u64(&rec, JST_F_SEQ, &seq) || seq >= n ||
            !jst_rec_get_str(&rec, JST_F_MESSAGE, &msg, &len)) {
            g->bad++;
            continue;
        }
        /* Rebuild what note seq must say. */
        char want[2048];
        uint64_t x = seq * 0x9E3779B97F4A7C15ull + 1;
        size_t k = (size_t)snprintf(want, sizeof(want), "record %llu ", (unsigned long long)seq);
        for (; k < bulk && k < sizeof(want) - 1; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            want[k] = (char)('a' + x % 26);
        }
        if (len != k || memcmp(msg, want, k) != 0 || g->seen[seq])
            g->bad++;
        g->seen[seq] = 1;
        g->n++;
    }
    g->truncated = jst_reader_truncated(rd);
    g->damaged = jst_reader_damaged(rd);
    snprintf(g->damage, sizeof(g->damage), "%s", jst_reader_damage(rd));
    jst_reader_close(rd);
}

/* Block layout of a trace: file offset of each block header. */
static size_t block_offsets(const uint8_t *b, size_t n, size_t *off, size_t max)
{
    size_t k = 0;
    for (size_t at = JST_HEADER_SIZE; at + JST_BLOCK_HDR_SIZE <= n && k < max;) {
        assert_memory_equal(b + at, JST_BLOCK_MAGIC, 4);
        assert_int_equal(rd32(b + at + 4), k); /* numbered from 0 */
        off[k++] = at;
        at += JST_BLOCK_HDR_SIZE + rd32(b + at + 8);
    }
    return k;
}

static void test_crc32c_known_value(void **state)
{
    (void)state;
    assert_int_equal(jst_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(jst_crc32c(jst_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
    assert_int_equal(jst_crc32c(0, "", 0), 0);
}

/* Every flush ends one block; records without a flush stay in memory. */
static void test_flush_writes_one_block(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof(path), "flush.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_note(w, 0, 40, 0), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, JST_HEADER_SIZE); /* buffered */
    assert_int_equal(emit_note(w, 1, 40, 1), 0);
    assert_int_equal(emit_note(w, 2, 40, 1), 0);
    assert_int_equal(jst_writer_close(w), 0);
    size_t n;
    uint8_t *b = slurp(path, &n);
    assert_int_equal(rd32(b + 20), JST_FILE_FLAG_BLOCKS);
    assert_int_equal(b[8], 2); /* version 2 */
    size_t off[8];
    assert_int_equal(block_offsets(b, n, off, 8), 2);
    /* The checksums are CRC-32C of the payload and of the header. */
    assert_int_equal(rd32(b + off[0] + 24), jst_crc32c(0, b + off[0], 24));
    assert_int_equal(rd32(b + off[0] + 20),
                     jst_crc32c(0, b + off[0] + JST_BLOCK_HDR_SIZE, rd32(b + off[0] + 8)));
    free(b);
}

/*
 * One record per block; every byte of blocks 3 to 6 (headers and payloads)
 * changed in turn. Each time, every record outside the damaged block is read
 * back exactly, nothing wrong comes out, and the damage is reported with its
 * block number and byte offset.
 */
static void test_any_damaged_byte_loses_only_its_block(void **state)
{
    (void)state;
    char path[128], bad[128];
    tmp_path(path, sizeof(path), "many.jst");
    tmp_path(bad, sizeof(bad), "many-bad.jst");
    const uint64_t n = 10;
    write_notes(path, n, 1, 300);
    size_t len;
    uint8_t *orig = slurp(path, &len);
    size_t off[16];
    size_t nb = block_offsets(orig, len, off, 16);
    assert_int_equal(nb, n + 1); /* the END record is a block too */
    uint8_t *b = malloc(len);
    unsigned tried = 0;
    for (size_t at = off[3]; at < off[7]; at++) {
        memcpy(b, orig, len);
        b[at] ^= 0x5A;
        spit(bad, b, len);
        size_t blk = 3;
        while (blk + 1 < nb && off[blk + 1] <= at)
            blk++;
        struct got g;
        read_notes(bad, n, 300, &g);
        assert_int_equal(g.rc, 0);
        assert_int_equal(g.bad, 0);
        assert_int_equal(g.n, n - 1);
        assert_false(g.seen[blk]);
        assert_true(g.end);
        assert_int_equal(g.damaged, 1);
        char want[64];
        snprintf(want, sizeof(want), "block %zu at byte %zu: ", blk, off[blk]);
        if (!strstr(g.damage, want))
            fail_msg("byte %zu: '%s' lacks '%s'", at, g.damage, want);
        free(g.seen);
        tried++;
    }
    printf("changed %u bytes one at a time: each lost exactly its own block\n", tried);
    free(b);
    free(orig);
}

/* A 6 MB trace with 2 bytes changed in the middle: all but the records of
 * the damaged block(s) come back. */
static void test_big_trace_two_bytes_changed(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof(path), "big.jst");
    const uint64_t n = 60000;
    const unsigned per = 20;
    write_notes(path, n, per, 160);
    size_t len;
    uint8_t *b = slurp(path, &len);
    b[len / 2] ^= 0x01;
    b[len / 2 + 1] ^= 0x80;
    spit(path, b, len);
    struct got g;
    read_notes(path, n, 160, &g);
    printf("%zu-byte trace, 2 bytes changed at byte %zu: %llu of %llu records recovered; %s\n", len,
           len / 2, (unsigned long long)g.n, (unsigned long long)n, g.damage);
    assert_true(len > 6000000);
    assert_int_equal(g.bad, 0);
    assert_int_equal(g.damaged, 1);
    assert_true(g.n >= n - 2 * per);
    assert_true(g.end);
    free(g.seen);
    free(b);
}

/* A cut in the middle of the last block is truncation, not damage. */
static void test_cut_block_is_truncation(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof(path), "cut.jst");
    write_notes(path, 5, 1, 100);
    size_t len;
    uint8_t *b = slurp(path, &len);
    spit(path, b, len - 10);
    struct got g;
    read_notes(path, 5, 100, &g);
    assert_int_equal(g.rc, 0);
    assert_int_equal(g.n, 5);
    assert_true(g.truncated);
    assert_int_equal(g.damaged, 0);
    free(g.seen);
    free(b);
}

/* Version 1 (one zstd stream, written by the version 1 writer) still reads. */
static void test_version1_still_reads(void **state)
{
    (void)state;
    char err[256];
    struct jst_reader *rd = jst_reader_open(JST_FIXTURES "/v1_trace.bin", err, sizeof(err));
    assert_non_null(rd);
    assert_int_equal(jst_reader_version(rd), 1);
    struct jst_record rec;
    int n = 0, rc, calls = 0;
    while ((rc = jst_reader_next(rd, &rec)) == 1) {
        n++;
        calls += rec.type == JST_REC_CALL;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 7);
    assert_int_equal(calls, 3);
    assert_false(jst_reader_truncated(rd));
    assert_int_equal(jst_reader_damaged(rd), 0);
    jst_reader_close(rd);
}

/* The descriptor open on path, from /proc/self/fd, or -1. */
static int fd_of(const char *path)
{
    for (int fd = 0; fd < 65536; fd++) {
        char link[64], target[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n > 0) {
            target[n] = 0;
            if (!strcmp(target, path))
                return fd;
        }
    }
    return -1;
}

/* FDSize from /proc/self/status: the size of the descriptor table; -1 when
 * unknown. */
static long table_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long size = -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "FDSize:", 7))
            size = strtol(line + 7, NULL, 10);
    fclose(f);
    return size;
}

/*
 * Opens a writer on name and checks where its descriptor went: above the
 * numbers programs use, close-on-exec, the low number it was opened on free
 * again, and none left after the close. "Above" is the top quarter of the
 * descriptor table the process already has (of the descriptor limit when
 * that is lower): the table must not grow for it. Returns NULL when all
 * holds, else what did not; *table and *fd say what was seen. Plain checks,
 * not cmocka's: it also runs in a forked child.
 */
static const char *writer_fd_check(const char *name, long *table, int *fd)
{
    char path[128];
    tmp_path(path, sizeof(path), name);
    *fd = -1;
    *table = table_size();
    if (*table <= 0)
        return "no FDSize in /proc/self/status";
    int probe = open("/dev/null", O_RDONLY | O_CLOEXEC); /* lowest free number */
    if (probe < 0)
        return "cannot open /dev/null";
    close(probe);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return "getrlimit failed";
    long top = *table;
    if (rl.rlim_cur < (rlim_t)top)
        top = (long)rl.rlim_cur;
    struct jst_writer *w = jst_writer_open(path);
    if (!w)
        return "jst_writer_open failed";
    const char *bad = NULL;
    *fd = fd_of(path);
    int again = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (*fd < 48)
        bad = "descriptor below 48";
    else if (*fd < top - top / 4)
        bad = "descriptor below the top quarter of the table";
    else if (*fd >= top)
        bad = "descriptor beyond the table (it grew)";
    else if (table_size() != *table)
        bad = "the descriptor table grew";
    else if (fcntl(*fd, F_GETFD) != FD_CLOEXEC)
        bad = "descriptor not close-on-exec";
    else if (again != probe)
        bad = "the low number the file was opened on is not free again";
    if (again >= 0)
        close(again);
    if (jst_writer_close(w) != 0 && !bad)
        bad = "jst_writer_close failed";
    if (!bad && fd_of(path) != -1)
        bad = "descriptor still open after the close";
    return bad;
}

/* In this process, whose table is what the test runner left it. */
static void test_descriptor_is_high(void **state)
{
    (void)state;
    long table;
    int fd;
    const char *bad = writer_fd_check("high.jst", &table, &fd);
    print_message("descriptor table %ld entries, trace descriptor %d: %s\n", table, fd,
                  bad ? bad : "ok");
    assert_null(bad);
}

/* In a process with the smallest table (64 entries), as a program that was
 * started with only a few descriptors open has: the child of a fork gets a
 * table just large enough for the descriptors open at the fork. */
static void test_descriptor_is_high_small_table(void **state)
{
    (void)state;
    for (int fd = 64; fd < 65536; fd++) /* a descriptor runners leave open up high */
        close(fd);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        long table;
        int fd;
        const char *bad = writer_fd_check("high_small.jst", &table, &fd);
        fprintf(stderr, "child: descriptor table %ld entries, trace descriptor %d: %s\n", table,
                fd, bad ? bad : "ok");
        _exit(table != 64 ? 3 : bad ? 1 : 0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* Closes every descriptor from 3 up, as daemons do. */
static void close_from_3(void)
{
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        close(fd);
}

/*
 * The program closes all its descriptors and opens its own file, which gets
 * a low number: the writer's next block must not go there. The trace goes on
 * in its own file, reopened, with a note saying so.
 */
static void test_closed_descriptor_reopens_same_file(void **state)
{
    (void)state;
    char path[128], mine[128];
    tmp_path(path, sizeof(path), "fd.jst");
    tmp_path(mine, sizeof(mine), "mine.txt");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_note(w, 0, 50, 1), 0);
    close_from_3();
    int fd = open(mine, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_int_equal(fd, 3);
    assert_int_equal(emit_note(w, 1, 50, 1), 0);
    char notice[256];
    assert_int_equal(jst_writer_notice(w, notice, sizeof(notice)), 1);
    assert_non_null(strstr(notice, "continues in the same file"));
    assert_int_equal(jst_writer_notice(w, notice, sizeof(notice)), 0); /* once */
    assert_int_equal(emit_note(w, 2, 50, 1), 0);
    assert_int_equal(jst_writer_close(w), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0); /* never written to, never closed */
    assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
    close(fd);
    char err[256];
    struct jst_reader *rd = jst_reader_open(path, err, sizeof(err));
    assert_non_null(rd);
    struct jst_record rec;
    int notes = 0, moved = 0;
    while (jst_reader_next(rd, &rec) == 1) {
        const char *m;
        uint32_t len;
        if (rec.type == JST_REC_NOTE && jst_rec_get_str(&rec, JST_F_MESSAGE, &m, &len)) {
            notes++;
            moved += len > 20 && memmem(m, len, "file descriptor", 15) != NULL;
        }
    }
    assert_int_equal(jst_reader_damaged(rd), 0);
    jst_reader_close(rd);
    assert_int_equal(notes, 4);
    assert_int_equal(moved, 1);
}

/* The same, but the trace file is gone too: a new file continues the trace,
 * opening with the first record again. */
static void test_closed_descriptor_and_removed_file(void **state)
{
    (void)state;
    char path[128], cont[128];
    tmp_path(path, sizeof(path), "gone.jst");
    tmp_path(cont, sizeof(cont), "gone.cont1.jst");
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(emit_note(w, 0, 50, 1), 0);
    close_from_3();
    assert_int_equal(unlink(path), 0);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600); /* someone else's */
    assert_true(fd >= 0);
    assert_int_equal(emit_note(w, 1, 50, 1), 0);
    assert_int_equal(jst_writer_close(w), 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0);
    close(fd);
    struct got g;
    read_notes(cont, 2, 50, &g);
    /* note 0 again (the first record), the note about the move, note 1 */
    assert_int_equal(g.n, 2);
    assert_int_equal(g.bad, 1);
    assert_true(g.seen[0] && g.seen[1]);
    free(g.seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_known_value),
        cmocka_unit_test(test_flush_writes_one_block),
        cmocka_unit_test(test_any_damaged_byte_loses_only_its_block),
        cmocka_unit_test(test_big_trace_two_bytes_changed),
        cmocka_unit_test(test_cut_block_is_truncation),
        cmocka_unit_test(test_version1_still_reads),
        cmocka_unit_test(test_descriptor_is_high),
        cmocka_unit_test(test_descriptor_is_high_small_table),
        cmocka_unit_test(test_closed_descriptor_reopens_same_file),
        cmocka_unit_test(test_closed_descriptor_and_removed_file),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
