/*
 * Trace writing and reading (implementation: common/trace_write.c,
 * common/trace_read.c, common/names.c). The on-disk layout is in
 * include/jitstall/format.h and docs/FORMAT.md.
 */
#ifndef JST_COMMON_TRACE_H
#define JST_COMMON_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "jitstall/format.h"

/* ---- building one record in a caller-supplied buffer (no allocation) ---- */
struct jst_rec {
    uint8_t *buf;   /* starts with the 8-byte record header */
    size_t len;     /* bytes used so far, header included */
    size_t cap;
    int overflow;   /* set when a field did not fit; the record is then not written */
};
void jst_rec_begin(struct jst_rec *r, void *buf, size_t cap, uint16_t type);
void jst_rec_u64(struct jst_rec *r, uint16_t key, uint64_t v);
void jst_rec_i64(struct jst_rec *r, uint16_t key, int64_t v);
void jst_rec_str(struct jst_rec *r, uint16_t key, const char *s); /* NULL: field omitted */
void jst_rec_strn(struct jst_rec *r, uint16_t key, const char *s, size_t n);
void jst_rec_bytes(struct jst_rec *r, uint16_t key, const void *p, size_t n);

/* ---- the writer: checksummed blocks (format version 2), thread-safe ---- */
struct jst_writer;
/* Creates path with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, writes the header,
 * and moves the descriptor to a high number (close-on-exec).
 * Returns NULL and sets errno on failure. */
struct jst_writer *jst_writer_open(const char *path);
/* Appends a finished record. With flush != 0 the block is ended: compressed
 * and write(2) done before return, so a SIGKILL after it loses nothing.
 * Before each write the descriptor's identity is checked; if the program took
 * it, the trace continues in its file reopened, or in "<name>.contN.jst".
 * Returns 0, or -1 with errno set (the writer then refuses further records). */
int jst_writer_emit(struct jst_writer *w, const struct jst_rec *r, int flush);
/* Why the writer stopped before its end (enum jst_trace_stop: a full disk,
 * the file-size limit, scarce descriptors, another error), 0 while it runs
 * or after a normal end. */
int jst_writer_stopped(struct jst_writer *w);
/* Once after the writer lost its descriptor and recovered: copies what
 * happened (one line) into buf and returns 1; else 0. Lock-free when none. */
int jst_writer_notice(struct jst_writer *w, char *buf, size_t n);
/* Writes the last block and closes the file. */
int jst_writer_close(struct jst_writer *w);
/* Writes the last block and closes the file but keeps the writer's memory: a
 * thread that still holds the pointer gets -1 from jst_writer_emit instead of
 * touching freed memory. For a process at exit, where other threads run on. */
int jst_writer_finish(struct jst_writer *w);
/* After fork in the child: forget the parent's writer without touching its file. */
void jst_writer_abandon(struct jst_writer *w);
/* Moves fd to a high number as the writer does its own (close-on-exec, in the
 * top quarter of the descriptor limit or of the table the process already
 * has) and closes fd; -1 with errno EMFILE when descriptors are scarce. */
int jst_fd_raise(int fd);
/* Fills the JST_BLOCK_HDR_SIZE-byte header of a block whose payload is
 * stored bytes at payload (both checksums computed). */
void jst_block_header(uint8_t *h, uint32_t index, const uint8_t *payload, uint32_t stored,
                      uint32_t raw, uint8_t encoding);
/* CRC-32C of n bytes, continuing from crc (0 to start). */
uint32_t jst_crc32c(uint32_t crc, const void *p, size_t n);

/* ---- the reader ---- */
struct jst_record {
    uint16_t type;
    uint16_t flags;
    uint32_t len;
    const uint8_t *payload; /* valid until the next jst_reader_next() */
};
struct jst_field {
    uint16_t key;
    uint8_t kind;
    uint64_t u64;           /* U64 and I64 (cast) */
    const uint8_t *data;    /* STR and BYTES */
    uint32_t len;
};
struct jst_reader;
/* Opens a trace. On failure returns NULL and writes a one-line reason to err. */
struct jst_reader *jst_reader_open(const char *path, char *err, size_t errlen);
/* 1: a record; 0: end of data; -1: a read error, or damage in a version 1
 * stream (reason in jst_reader_error()). Ending without a complete stream or
 * without END is not an error: it sets jst_reader_truncated(). In a version 2
 * trace, damaged blocks are skipped: reading goes on with the next good block,
 * and jst_reader_damaged() counts the damaged spans. */
int jst_reader_next(struct jst_reader *rd, struct jst_record *out);
int jst_reader_truncated(const struct jst_reader *rd);
unsigned jst_reader_damaged(const struct jst_reader *rd);
/* One line: where the damage is (block number, byte offset) and why. */
const char *jst_reader_damage(struct jst_reader *rd);
const char *jst_reader_error(const struct jst_reader *rd);
unsigned jst_reader_version(const struct jst_reader *rd);
void jst_reader_close(struct jst_reader *rd);

/* Field iteration over a record payload. */
struct jst_field_iter {
    const uint8_t *p, *end;
    int bad; /* set when a field runs past the payload */
};
void jst_fields_begin(struct jst_field_iter *it, const struct jst_record *rec);
int jst_fields_next(struct jst_field_iter *it, struct jst_field *f); /* 1 or 0 */
/* First field with key; return 1 if found. */
int jst_rec_get_u64(const struct jst_record *rec, uint16_t key, uint64_t *out);
int jst_rec_get_str(const struct jst_record *rec, uint16_t key, const char **s, uint32_t *len);

/* ---- names (common/names.c) ---- */
const char *jst_rec_type_name(uint16_t type); /* "call", "process", ...; NULL if unknown */
const char *jst_key_name(uint16_t key);       /* "start_ns", ...; NULL if unknown */
/* How a key is shown (the print column of common/schema.h). */
enum jst_print {
    JST_PRINT_PLAIN = 0,
    JST_PRINT_HEX,      /* "0x..." */
    JST_PRINT_ENUM,     /* enum_name(value) when it has one */
    JST_PRINT_LIST,     /* repeated; dump --json gathers it into list_name */
    JST_PRINT_REPEATED, /* repeated; shown like PLAIN */
    JST_PRINT_U64S,     /* BYTES of little-endian u64s, each "0x..." */
};
struct jst_key_info {
    const char *name;
    uint8_t kind;  /* enum jst_kind writers use */
    uint8_t print; /* enum jst_print */
    const char *(*enum_name)(unsigned value);
    const char *list_name;
};
const struct jst_key_info *jst_key_info(uint16_t key); /* NULL if unknown */
const char *jst_call_name(unsigned call);     /* "cuModuleLoadData" */
const char *jst_verdict_name(unsigned v);     /* "sass", "ptx_jit", ... */
const char *jst_cache_name(unsigned c);       /* "hit", "miss_stored", ... */
const char *jst_cache_reason_name(unsigned r);/* "disabled", "read_only", ... */
const char *jst_image_kind_name(unsigned k);  /* "fatbin_wrapper", "ptx", ... */
const char *jst_route_name(unsigned r);       /* "direct", "dlsym", "procaddr" */
const char *jst_cupti_op_name(unsigned op);
const char *jst_mod_event_name(unsigned e);
const char *jst_spawn_name(unsigned how);    /* "exec", "posix_spawn" */
const char *jst_range_op_name(unsigned op);   /* "push", "pop", "start", "end" */
const char *jst_cache_phase_name(unsigned phase); /* "start", "exit" */
const char *jst_trace_stop_name(unsigned why); /* "disk_full", "file_size_limit", ... */

#endif
