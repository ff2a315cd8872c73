/*
 * Fuzz target for the sampler's records: the SAMPLE record's fields as the
 * analyzer reads them (analyzer/compile_read.c) and a first call's sampled
 * Python functions (analyzer/firstcall.c, analyzer/samplefn.c), through the
 * real loader (jst_model_add). The input is a list of {u16 len, len bytes}
 * chunks, each the payload of one SAMPLE record. Around them the target
 * writes a process, and for each distinct before_seq (up to 16) a compile on
 * the first such sample's thread and a first launch with that seq, so that
 * the samples become a first call's. Then it checks what the report relies
 * on: at most 10 functions, largest first, each (function, file) once, a
 * line's time within its function's, and a blame table that sums to the
 * first call's time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "compiles.h"
#include "model.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LAUNCHES 16

static int put(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

/* One record: its 8-byte header, then the payload. */
static int put_record(int fd, uint16_t type, const uint8_t *payload, size_t len)
{
    uint8_t h[JST_REC_HDR_SIZE] = {
        (uint8_t)type,        (uint8_t)(type >> 8), 0, 0, (uint8_t)len, (uint8_t)(len >> 8),
        (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    return put(fd, h, sizeof h) || put(fd, payload, len) ? -1 : 0;
}

/* A record built with the writer's field encoding. */
static int put_built(int fd, struct jst_rec *r)
{
    if (r->overflow)
        return -1;
    uint16_t type = (uint16_t)(r->buf[0] | r->buf[1] << 8);
    return put_record(fd, type, r->buf + JST_REC_HDR_SIZE, r->len - JST_REC_HDR_SIZE);
}

static void check_first_call(const struct jst_first_call *f)
{
    uint64_t sum = 0;
    for (unsigned c = 0; c < JST_CAUSE_MAX_; c++)
        sum += f->blame[c];
    if (sum != f->dur_ns || f->n_samples > 10 || (f->n_samples && !f->samples))
        __builtin_trap();
    for (size_t i = 0; i < f->n_samples; i++) {
        const struct jst_sample_fn *s = &f->samples[i];
        if (!s->func || !s->file || s->line_ns > s->dur_ns || strlen(s->func) > 511 ||
            strlen(s->file) > 1023)
            __builtin_trap();
        if (i && s->dur_ns > f->samples[i - 1].dur_ns)
            __builtin_trap(); /* largest first */
        for (size_t k = 0; k < i; k++)
            if (!strcmp(s->func, f->samples[k].func) && !strcmp(s->file, f->samples[k].file))
                __builtin_trap(); /* each function once */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_samples", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    uint8_t head[JST_HEADER_SIZE] = {0};
    memcpy(head, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN);
    head[8] = head[10] = 1; /* version 1, a plain record stream */
    for (int i = 0; i < 4; i++)
        head[12 + i] = (uint8_t)((uint32_t)JST_ENDIAN_MARK >> (8 * i));
    head[16] = JST_HEADER_SIZE;
    static uint8_t buf[4096];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_PROCESS);
    jst_rec_u64(&r, JST_F_PID, 100);
    jst_rec_u64(&r, JST_F_PROC_START_NS, 1000000000);
    jst_rec_str(&r, JST_F_EXE, "/opt/app/bin/prog");
    int bad = put(fd, head, sizeof head) || put_built(fd, &r);

    uint64_t seqs[MAX_LAUNCHES], tids[MAX_LAUNCHES];
    size_t n_seq = 0;
    for (size_t at = 0; !bad && size - at >= 2;) {
        size_t len = (size_t)(data[at] | data[at + 1] << 8);
        at += 2;
        len = len < size - at ? len : size - at;
        struct jst_record rec = {JST_REC_SAMPLE, 0, (uint32_t)len, data + at};
        uint64_t seq = 0, tid = 0;
        if (jst_rec_get_u64(&rec, JST_F_BEFORE_SEQ, &seq) && seq && n_seq < MAX_LAUNCHES) {
            size_t k = 0;
            while (k < n_seq && seqs[k] != seq)
                k++;
            if (k == n_seq) {
                jst_rec_get_u64(&rec, JST_F_TID, &tid);
                seqs[n_seq] = seq;
                tids[n_seq++] = tid;
            }
        }
        bad |= put_record(fd, JST_REC_SAMPLE, data + at, len);
        at += len;
    }
    for (size_t k = 0; !bad && k < n_seq; k++) {
        uint64_t t = 2000000000ull + k * 1000000000ull;
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_COMPILE);
        jst_rec_u64(&r, JST_F_TID, tids[k]);
        jst_rec_u64(&r, JST_F_START_NS, t);
        jst_rec_u64(&r, JST_F_DUR_NS, 1000000);
        jst_rec_str(&r, JST_F_COMPILER, "ptxas");
        jst_rec_str(&r, JST_F_PROGRAM, "/usr/local/cuda/bin/ptxas");
        jst_rec_u64(&r, JST_F_CHILD_PID, 200 + k);
        jst_rec_u64(&r, JST_F_WAIT_STATUS, 0);
        bad |= put_built(fd, &r);
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_CALL);
        jst_rec_str(&r, JST_F_CALL, "cuLaunchKernel");
        jst_rec_u64(&r, JST_F_CALL_ID, JST_CALL_cuLaunchKernel);
        jst_rec_u64(&r, JST_F_SEQ, seqs[k]);
        jst_rec_u64(&r, JST_F_TID, tids[k]);
        jst_rec_u64(&r, JST_F_START_NS, t + 500000000);
        jst_rec_u64(&r, JST_F_DUR_NS, 1000);
        jst_rec_u64(&r, JST_F_FUNC, 0x100 + k);
        jst_rec_str(&r, JST_F_NAME, "_Z1kv");
        bad |= put_built(fd, &r);
    }
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_END);
    jst_rec_u64(&r, JST_F_EXIT_STATUS, 0);
    bad |= put_built(fd, &r);

    char path[64], err[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct jst_run run = {0};
    if (!bad && jst_model_add(&run, path, err, sizeof err) >= 0) {
        for (size_t i = 0; i < run.n_procs; i++)
            for (size_t k = 0; k < run.procs[i].n_first_calls; k++)
                check_first_call(&run.procs[i].first_calls[k]);
    }
    jst_model_free(&run);
    close(fd);
    return 0;
}
