/*
 * `jitstall dump [--json] TRACE|DIR...`: prints every record of each trace, one
 * line per record, as text or as one JSON object per line. It uses only the
 * public reader API of common/trace.h, so it doubles as a check of the format.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "curesult.h"
#include "utf8.h"
#include "cli.h"
#include "paths.h"
#include "jsonw.h"
#include "trace.h"

static const char dump_usage[] =
    "usage: jitstall dump [--json] TRACE|DIR...\n"
    "\n"
    "Print every record of each trace, one line per record.\n"
    "\n"
    "  --json    one JSON object per line: \"type\" is the record type, every field\n"
    "            is a member named by its key (unknown keys as \"key_<n>\").\n"
    "            Enum fields (call_id, verdict, cache, cache_reason, image_kind,\n"
    "            route, cupti_op, mod_event, phase, range_op) are name strings;\n"
    "            repeated arg, env, kernel, entry fields are the arrays \"argv\",\n"
    "            \"env\", \"kernels\", \"entries\"; handles, addresses and hashes are \"0x...\"\n"
    "            strings; ips is an array of \"0x...\" strings; bytes are hex strings.\n"
    "  -h, --help  this text\n"
    "\n"
    "A trace that stops early (the process was killed) is printed up to its last\n"
    "record, with \"truncated after N records\" on stderr. A damaged trace is\n"
    "printed without its damaged parts, with one line on stderr saying where the\n"
    "damage is. Both are partial, not errors: exit status 0. A file that cannot\n"
    "be opened or is not a trace: one line on stderr, exit status 2.\n";

/* ---- value formatting ---- */

static void put_hex_bytes(FILE *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%02x", p[i]);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The name of an enum-valued field's value (schema print ENUM); NULL if the
 * key is not an enum or the value has no name. */
static const char *enum_value_name(uint16_t key, uint64_t v)
{
    const struct jst_key_info *k = jst_key_info(key);
    if (v > UINT32_MAX || !k || k->print != JST_PRINT_ENUM)
        return NULL;
    return k->enum_name((unsigned)v);
}

/* Handles, addresses and hashes (schema print HEX). */
static int is_hex_key(uint16_t key)
{
    const struct jst_key_info *k = jst_key_info(key);
    return k && k->print == JST_PRINT_HEX;
}

/* JSON array names of the keys that are meant to repeat (schema print LIST). */
static const char *array_name(uint16_t key)
{
    const struct jst_key_info *k = jst_key_info(key);
    return k && k->print == JST_PRINT_LIST ? k->list_name : NULL;
}

/* Prints one field value. JSON and text differ only in how numbers that are
 * not names are shown, so one function serves both. */
static void put_value(FILE *out, const struct jst_field *f, int json)
{
    switch (f->kind) {
    case JST_K_U64: {
        const char *name = enum_value_name(f->key, f->u64);
        if (name) {
            if (json)
                jst_json_write_string(out, name, strlen(name));
            else
                fputs(name, out);
        } else if (is_hex_key(f->key))
            fprintf(out, json ? "\"0x%llx\"" : "0x%llx", (unsigned long long)f->u64);
        else
            fprintf(out, "%llu", (unsigned long long)f->u64);
        break;
    }
    case JST_K_I64:
        fprintf(out, "%lld", (long long)(int64_t)f->u64);
        break;
    case JST_K_STR:
        if (json) {
            jst_json_write_string(out, (const char *)f->data, f->len);
            break;
        }
        /* Quoted, by the CLI's one escaping rule (utf8.h); a quote inside
         * shows as \" so that the value's end stays plain. */
        fputc('"', out);
        for (uint32_t i = 0, from = 0; i <= f->len; i++)
            if (i == f->len || f->data[i] == '"') {
                jst_text_putn(out, (const char *)f->data + from, i - from);
                if (i < f->len)
                    fputs("\\\"", out);
                from = i + 1;
            }
        fputc('"', out);
        break;
    case JST_K_BYTES:
        if (jst_key_info(f->key) && jst_key_info(f->key)->print == JST_PRINT_U64S &&
            f->len % 8 == 0) {
            fputc('[', out);
            for (uint32_t i = 0; i < f->len; i += 8)
                fprintf(out, json ? "%s\"0x%llx\"" : "%s0x%llx", i ? "," : "",
                        (unsigned long long)le64(f->data + i));
            fputc(']', out);
        } else {
            if (json)
                fputc('"', out);
            put_hex_bytes(out, f->data, f->len);
            if (json)
                fputc('"', out);
        }
        break;
    }
}

static void put_key(FILE *out, uint16_t key, int json)
{
    const char *name = jst_key_name(key);
    if (json) {
        if (name)
            fprintf(out, "\"%s\":", name);
        else
            fprintf(out, "\"key_%u\":", key);
    } else {
        if (name)
            fprintf(out, " %s=", name);
        else
            fprintf(out, " key_%u=", key);
    }
}

static void put_type(FILE *out, uint16_t type, int json)
{
    const char *name = jst_rec_type_name(type);
    if (json)
        fputs("{\"type\":", out);
    if (name)
        fprintf(out, json ? "\"%s\"" : "%s", name);
    else
        fprintf(out, json ? "\"type_%u\"" : "type_%u", type);
}

/* ---- one record ---- */

#define NO_FIELD UINT32_MAX

/* Per-key chains of a record's fields, so repeated keys print as one array
 * in linear time whatever the record holds. Kept between records; only the
 * keys touched are reset. */
struct key_index {
    uint32_t first[65536], last[65536];
    uint16_t touched[65536];
    unsigned ntouched;
    uint32_t *off, *next; /* per field: payload offset, next field with its key */
    size_t cap;
};

static void index_reset(struct key_index *ix)
{
    for (unsigned i = 0; i < ix->ntouched; i++)
        ix->first[ix->touched[i]] = ix->last[ix->touched[i]] = NO_FIELD;
    ix->ntouched = 0;
}

/* Indexes the record's fields; returns their count, or -1 out of memory.
 * *bad is set when the fields run past the payload. */
static long index_record(struct key_index *ix, const struct jst_record *rec, int *bad)
{
    struct jst_field_iter it;
    struct jst_field f;
    size_t n = 0;
    index_reset(ix);
    jst_fields_begin(&it, rec);
    for (const uint8_t *at = it.p; jst_fields_next(&it, &f); at = it.p) {
        if (n == ix->cap) {
            size_t cap = ix->cap ? ix->cap * 2 : 256;
            uint32_t *off = realloc(ix->off, cap * sizeof(*off));
            if (!off)
                return -1;
            ix->off = off;
            uint32_t *next = realloc(ix->next, cap * sizeof(*next));
            if (!next)
                return -1;
            ix->next = next;
            ix->cap = cap;
        }
        ix->off[n] = (uint32_t)(at - rec->payload);
        ix->next[n] = NO_FIELD;
        if (ix->first[f.key] == NO_FIELD) {
            ix->first[f.key] = (uint32_t)n;
            ix->touched[ix->ntouched++] = f.key;
        } else
            ix->next[ix->last[f.key]] = (uint32_t)n;
        ix->last[f.key] = (uint32_t)n;
        n++;
    }
    *bad = it.bad;
    return (long)n;
}

/* The name of a failed driver call's result (CUDA_ERROR_...), or NULL: for a
 * success, another record, or the runtime compilers, whose results are not
 * CUresults. */
static const char *result_name(const struct jst_record *rec)
{
    uint64_t call = 0, r = 0;
    if (rec->type != JST_REC_CALL || !jst_rec_get_u64(rec, JST_F_RESULT, &r) || r == 0)
        return NULL;
    jst_rec_get_u64(rec, JST_F_CALL_ID, &call);
    if (call == JST_CALL_nvrtcCompileProgram || call == JST_CALL_nvJitLinkComplete)
        return NULL;
    return jst_curesult_name((long long)(int64_t)r);
}

/* Decodes the field that starts at payload offset off (already validated). */
static void field_at(const struct jst_record *rec, uint32_t off, struct jst_field *f)
{
    struct jst_record sub = {rec->type, rec->flags, rec->len - off, rec->payload + off};
    struct jst_field_iter it;
    jst_fields_begin(&it, &sub);
    jst_fields_next(&it, f);
}

static void put_record_json(FILE *out, const struct jst_record *rec, struct key_index *ix, long n,
                            int bad)
{
    put_type(out, rec->type, 1);
    for (long i = 0; i < n; i++) {
        struct jst_field f;
        field_at(rec, ix->off[i], &f);
        const char *arr = array_name(f.key);
        int repeated = ix->first[f.key] != ix->last[f.key];
        if (!arr && !repeated) {
            fputc(',', out);
            put_key(out, f.key, 1);
            put_value(out, &f, 1);
            continue;
        }
        if (ix->first[f.key] != (uint32_t)i)
            continue; /* printed with the first of its key */
        fputc(',', out);
        if (arr)
            fprintf(out, "\"%s\":", arr);
        else
            put_key(out, f.key, 1);
        fputc('[', out);
        for (uint32_t j = (uint32_t)i; j != NO_FIELD; j = ix->next[j]) {
            struct jst_field g;
            field_at(rec, ix->off[j], &g);
            if (j != (uint32_t)i)
                fputc(',', out);
            put_value(out, &g, 1);
        }
        fputc(']', out);
    }
    /* A call without its API name still gets one, from call_id. */
    if (rec->type == JST_REC_CALL && ix->first[JST_F_CALL] == NO_FIELD &&
        ix->first[JST_F_CALL_ID] != NO_FIELD) {
        struct jst_field f;
        field_at(rec, ix->off[ix->first[JST_F_CALL_ID]], &f);
        const char *name = f.kind == JST_K_U64 ? enum_value_name(JST_F_CALL_ID, f.u64) : NULL;
        if (name)
            fprintf(out, ",\"call\":\"%s\"", name);
    }
    if (result_name(rec))
        fprintf(out, ",\"result_name\":\"%s\"", result_name(rec));
    if (bad)
        fputs(",\"damaged\":true", out);
    fputs("}\n", out);
}

/* One line; the fields in their order, each key=value. Returns whether the
 * fields ran past the payload (they are printed up to there). */
static int put_record_text(FILE *out, const struct jst_record *rec)
{
    struct jst_field_iter it;
    struct jst_field f;
    put_type(out, rec->type, 0);
    jst_fields_begin(&it, rec);
    while (jst_fields_next(&it, &f)) {
        put_key(out, f.key, 0);
        put_value(out, &f, 0);
        if (f.key == JST_F_RESULT && result_name(rec))
            fprintf(out, " (%s)", result_name(rec));
    }
    if (it.bad)
        fputs(" <damaged fields>", out);
    fputc('\n', out);
    return it.bad;
}

/* ---- files ---- */

/* Returns the exit status this file deserves. */
static int dump_file(const char *path, int json, int heading, struct key_index *ix)
{
    char err[256];
    struct jst_reader *rd = jst_reader_open(path, err, sizeof(err));
    if (!rd) {
        jst_errorf("dump", "%s: %s", path, err);
        return JST_EXIT_USAGE;
    }
    if (heading && !json)
        printf("# %s\n", jst_text(path));
    struct jst_record rec;
    unsigned long long count = 0, damaged = 0;
    int rc, status = JST_EXIT_OK;
    while ((rc = jst_reader_next(rd, &rec)) == 1) {
        int bad = 0;
        long n = json ? index_record(ix, &rec, &bad) : 0;
        if (n < 0) {
            jst_errorf("dump", "%s: out of memory", path);
            jst_reader_close(rd);
            return JST_EXIT_USAGE;
        }
        if (json)
            put_record_json(stdout, &rec, ix, n, bad);
        else
            bad = put_record_text(stdout, &rec);
        count++;
        damaged += bad != 0;
    }
    fflush(stdout);
    /* Damage and truncation make a partial trace: said on stderr, exit 0
     * (the rule of every command, jitstall(1)). */
    if (rc < 0)
        jst_warnf("dump", "%s: partial trace: %s (after %llu records)", path, jst_reader_error(rd),
                  count);
    if (jst_reader_damaged(rd))
        jst_warnf("dump", "%s: partial trace: damaged: %s", path, jst_reader_damage(rd));
    if (damaged)
        jst_warnf("dump", "%s: partial trace: %llu damaged records", path, damaged);
    if (rc >= 0 && jst_reader_truncated(rd))
        jst_errorf("dump", "%s: truncated after %llu records", path, count);
    jst_reader_close(rd);
    return status;
}

static const struct option dump_longopts[] = {
    {"json", no_argument, NULL, 'j'},
    JST_CLI_HELP_END,
};
/* Options may follow the traces; `--` ends them. */
static const struct jst_cli dump_cli = {
    "dump", ":h", dump_longopts, dump_usage, "trace", jst_cli_set_flag,
};

static int cmd_dump(int argc, char **argv)
{
    int json = 0;
    int rc = jst_cli_parse(&dump_cli, argc, argv, &json);
    if (rc != JST_CLI_GO)
        return rc;
    int first = optind;
    struct key_index *ix = malloc(sizeof(*ix));
    if (!ix) {
        jst_errorf("dump", "out of memory");
        return JST_EXIT_USAGE;
    }
    memset(ix->first, 0xff, sizeof(ix->first));
    memset(ix->last, 0xff, sizeof(ix->last));
    ix->ntouched = 0;
    ix->off = ix->next = NULL;
    ix->cap = 0;

    /* A directory stands for every *.jst in it, by name, as in every other
     * reader (the model's listing, so the two never disagree). */
    struct jst_paths ps = {0};
    for (int i = first; i < argc; i++)
        if (jst_expand_path(argv[i], &ps) < 0)
            ps.bad = 1;
    int status = ps.bad ? JST_EXIT_USAGE : JST_EXIT_OK;
    for (size_t i = 0; i < ps.n; i++)
        if (dump_file(ps.v[i], json, ps.n > 1, ix) != JST_EXIT_OK)
            status = JST_EXIT_USAGE;
    jst_paths_free(&ps);
    free(ix->off);
    free(ix->next);
    free(ix);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        jst_errorf("dump", "cannot write output");
        status = JST_EXIT_USAGE;
    }
    return status;
}

JST_COMMAND(dump, cmd_dump, "print every record of traces, as text or JSON lines")
