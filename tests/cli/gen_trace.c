/*
 * gen_trace: writes a jitstall trace from a small text description, through the
 * real writer in common/trace.h, so the CLI tests can build exact scenarios
 * without the preload or a GPU.
 *
 * usage: gen_trace [--truncate] [--batch] OUT.jst [SPEC]   (SPEC defaults to stdin)
 *
 * Each SPEC line is one record: "<type> key=value key=value ...". Types:
 * process device call begin cache stack modmap cupti note end range compile sample
 * fw_cache reap progress ready fw_event ("begin": a call's start record, as the preload writes
 * before a long call; "ready": the moment the program said it was ready). Values are numbers
 * (decimal, 0x hex, or with a time suffix ns/us/ms/s, converted to ns), enum
 * names (verdict=ptx_jit, cache=hit, call_id=cuModuleLoadData, ...), text
 * ("quoted" when it has spaces; inside quotes \n is a newline, \xHH a byte and
 * \c the character c), or for ips/build_id a comma-separated hex list.
 * key_N=value writes key number N (a key a newer preload may add) as a number.
 * key*N=c writes text of N times the character c (a huge field without a
 * huge line). A line "repeat N <type> ..." writes its record N times.
 * '#' starts a comment. A call (or begin) record gets seq, tid and call_id filled in when
 * they are missing. --truncate leaves the stream unfinished, like a killed
 * process: no END record (each record is its own block, all written).
 * --batch writes records as the preload writes its launches: into 128 KiB
 * blocks, zstd-compressed, not one block each.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"

enum val_kind { V_U64, V_I64, V_STR, V_IPS, V_HEXBYTES };

/* Names the value may be given by, for enum-valued keys. */
typedef const char *(*name_fn)(unsigned);

struct keydef {
    const char *name;
    uint16_t key;
    enum val_kind kind;
    name_fn names;
};

static const struct keydef keys[] = {
    {"tid", JST_F_TID, V_U64, NULL},
    {"start", JST_F_START_NS, V_U64, NULL},
    {"dur", JST_F_DUR_NS, V_U64, NULL},
    {"result", JST_F_RESULT, V_I64, NULL},
    {"call_id", JST_F_CALL_ID, V_U64, jst_call_name},
    {"call", JST_F_CALL, V_STR, NULL},
    {"seq", JST_F_SEQ, V_U64, NULL},
    {"stack_id", JST_F_STACK_ID, V_U64, NULL},
    {"route", JST_F_ROUTE, V_U64, jst_route_name},
    {"pid", JST_F_PID, V_U64, NULL},
    {"ppid", JST_F_PPID, V_U64, NULL},
    {"host", JST_F_HOST, V_STR, NULL},
    {"exe", JST_F_EXE, V_STR, NULL},
    {"arg", JST_F_ARG, V_STR, NULL},
    {"env", JST_F_ENV, V_STR, NULL},
    {"realtime", JST_F_REALTIME_NS, V_U64, NULL},
    {"mono", JST_F_MONO_NS, V_U64, NULL},
    {"proc_start", JST_F_PROC_START_NS, V_U64, NULL},
    {"version", JST_F_JST_VERSION, V_STR, NULL},
    {"cwd", JST_F_CWD, V_STR, NULL},
    {"device", JST_F_DEVICE, V_U64, NULL},
    {"cc_major", JST_F_CC_MAJOR, V_U64, NULL},
    {"cc_minor", JST_F_CC_MINOR, V_U64, NULL},
    {"dev_name", JST_F_DEV_NAME, V_STR, NULL},
    {"driver_version", JST_F_DRIVER_VERSION, V_U64, NULL},
    {"driver_release", JST_F_DRIVER_RELEASE, V_STR, NULL},
    {"image_kind", JST_F_IMAGE_KIND, V_U64, jst_image_kind_name},
    {"image_size", JST_F_IMAGE_SIZE, V_U64, NULL},
    {"image_hash", JST_F_IMAGE_HASH, V_U64, NULL},
    {"path", JST_F_PATH, V_STR, NULL},
    {"handle", JST_F_HANDLE, V_U64, NULL},
    {"func", JST_F_FUNC, V_U64, NULL},
    {"name", JST_F_NAME, V_STR, NULL},
    {"source", JST_F_SOURCE, V_STR, NULL},
    {"ctx", JST_F_CTX, V_U64, NULL},
    {"jit_input", JST_F_JIT_INPUT, V_U64, NULL},
    {"cubin_size", JST_F_CUBIN_SIZE, V_U64, NULL},
    {"load_device", JST_F_LOAD_DEVICE, V_U64, NULL},
    {"parent", JST_F_PARENT, V_U64, NULL},
    {"verdict", JST_F_VERDICT, V_U64, jst_verdict_name},
    {"sass_arch", JST_F_SASS_ARCH, V_STR, NULL},
    {"jit_from", JST_F_JIT_FROM, V_STR, NULL},
    {"kernel", JST_F_KERNEL, V_STR, NULL},
    {"ptx_size", JST_F_PTX_SIZE, V_U64, NULL},
    {"reason", JST_F_REASON, V_STR, NULL},
    {"cache", JST_F_CACHE, V_U64, jst_cache_name},
    {"cache_reason", JST_F_CACHE_REASON, V_U64, jst_cache_reason_name},
    {"entry", JST_F_ENTRY, V_STR, NULL},
    {"target_cc", JST_F_TARGET_CC, V_U64, NULL},
    {"cache_new_bytes", JST_F_CACHE_NEW_BYTES, V_U64, NULL},
    {"cache_new_entries", JST_F_CACHE_NEW_ENTRIES, V_U64, NULL},
    {"phase", JST_F_PHASE, V_U64, NULL},
    {"cache_path", JST_F_CACHE_PATH, V_STR, NULL},
    {"cache_path_env", JST_F_CACHE_PATH_ENV, V_U64, NULL},
    {"exists", JST_F_EXISTS, V_U64, NULL},
    {"writable", JST_F_WRITABLE, V_U64, NULL},
    {"size_bytes", JST_F_SIZE_BYTES, V_U64, NULL},
    {"entries", JST_F_ENTRIES, V_U64, NULL},
    {"max_bytes", JST_F_MAX_BYTES, V_U64, NULL},
    {"disabled", JST_F_DISABLED, V_U64, NULL},
    {"ips", JST_F_IPS, V_IPS, NULL},
    {"mod_event", JST_F_MOD_EVENT, V_U64, jst_mod_event_name},
    {"mod_path", JST_F_MOD_PATH, V_STR, NULL},
    {"bias", JST_F_MOD_BIAS, V_U64, NULL},
    {"build_id", JST_F_BUILD_ID, V_HEXBYTES, NULL},
    {"file_size", JST_F_FILE_SIZE, V_U64, NULL},
    {"mtime", JST_F_MTIME_NS, V_U64, NULL},
    {"mod_start", JST_F_MOD_START, V_U64, NULL},
    {"mod_end", JST_F_MOD_END, V_U64, NULL},
    {"cupti_op", JST_F_CUPTI_OP, V_U64, jst_cupti_op_name},
    {"cupti_start", JST_F_CUPTI_START_NS, V_U64, NULL},
    {"cupti_end", JST_F_CUPTI_END_NS, V_U64, NULL},
    {"cupti_cache_path", JST_F_CUPTI_CACHE_PATH, V_STR, NULL},
    {"cupti_cache_size", JST_F_CUPTI_CACHE_SIZE, V_U64, NULL},
    {"load_seq", JST_F_CUPTI_LOAD_SEQ, V_U64, NULL},
    {"exit_status", JST_F_EXIT_STATUS, V_I64, NULL},
    {"events", JST_F_EVENTS, V_U64, NULL},
    {"end_reason", JST_F_END_REASON, V_STR, NULL},
    {"message", JST_F_MESSAGE, V_STR, NULL},
    {"level", JST_F_LEVEL, V_U64, NULL},
    {"range_op", JST_F_RANGE_OP, V_U64, jst_range_op_name},
    {"range_id", JST_F_RANGE_ID, V_U64, NULL},
    {"domain", JST_F_DOMAIN, V_STR, NULL},
    {"depth", JST_F_DEPTH, V_U64, NULL},
    {"py_frame", JST_F_PY_FRAME, V_STR, NULL},
    {"compiler", JST_F_COMPILER, V_STR, NULL},
    {"program", JST_F_PROGRAM, V_STR, NULL},
    {"target", JST_F_TARGET, V_STR, NULL},
    {"input", JST_F_INPUT, V_STR, NULL},
    {"output", JST_F_OUTPUT, V_STR, NULL},
    {"child_pid", JST_F_CHILD_PID, V_U64, NULL},
    {"wait_status", JST_F_WAIT_STATUS, V_U64, NULL},
    {"spawn_how", JST_F_SPAWN_HOW, V_U64, jst_spawn_name},
    {"wait_ns", JST_F_WAIT_NS, V_U64, NULL},
    {"out_size", JST_F_OUT_SIZE, V_U64, NULL},
    {"framework", JST_F_FRAMEWORK, V_STR, NULL},
    {"fs_type", JST_F_FS_TYPE, V_STR, NULL},
    {"ephemeral", JST_F_EPHEMERAL, V_U64, NULL},
    {"env_name", JST_F_ENV_NAME, V_STR, NULL},
    {"mount", JST_F_MOUNT, V_STR, NULL},
    {"sample_ns", JST_F_SAMPLE_NS, V_U64, NULL},
    {"samples", JST_F_SAMPLES, V_U64, NULL},
    {"before_seq", JST_F_BEFORE_SEQ, V_U64, NULL},
    {"period_ns", JST_F_PERIOD_NS, V_U64, NULL},
    {"window_ns", JST_F_WINDOW_NS, V_U64, NULL},
    {"end_unseen", JST_F_END_UNSEEN, V_U64, NULL},
    {"not_dir", JST_F_NOT_DIR, V_U64, NULL},
    {"entries_more", JST_F_ENTRIES_MORE, V_U64, NULL},
    {"cache_path_len", JST_F_PATH_LEN, V_U64, NULL},
    {"ready_spec", JST_F_READY_SPEC, V_STR, NULL},
    {"graph", JST_F_GRAPH, V_U64, NULL},
    {"rtc_program", JST_F_RTC_PROGRAM, V_STR, NULL},
    {"rtc_ptx_hash", JST_F_RTC_PTX_HASH, V_U64, NULL},
    {"in_flight", JST_F_IN_FLIGHT, V_U64, NULL},
    {"fw_stage", JST_F_FW_STAGE, V_STR, NULL},
    {"fw_cache_outcome", JST_F_FW_CACHE, V_STR, NULL},
    {"fw_detail", JST_F_FW_DETAIL, V_STR, NULL},
};

static const struct {
    const char *name;
    uint16_t type;
} types[] = {
    {"process", JST_REC_PROCESS},   {"device", JST_REC_DEVICE},   {"call", JST_REC_CALL},
    {"cache", JST_REC_CACHE_STATE}, {"stack", JST_REC_STACK},     {"modmap", JST_REC_MODMAP},
    {"cupti", JST_REC_CUPTI_JIT},   {"note", JST_REC_NOTE},       {"end", JST_REC_END},
    {"range", JST_REC_RANGE},       {"compile", JST_REC_COMPILE}, {"sample", JST_REC_SAMPLE},
    {"fw_cache", JST_REC_FW_CACHE}, {"begin", JST_REC_BEGIN},     {"reap", JST_REC_REAP},
    {"progress", JST_REC_PROGRESS}, {"ready", JST_REC_READY},     {"fw_event", JST_REC_FW_EVENT},
};

static int lineno;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "gen_trace: line %d: ", lineno);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

/* A number with an optional time suffix, or an enum name when names is set. */
static uint64_t parse_u64(const char *s, name_fn names)
{
    if (names && !isdigit((unsigned char)*s)) {
        for (unsigned v = 0; v < 256; v++) {
            const char *n = names(v);
            if (n && !strcmp(n, s))
                return v;
        }
        die("unknown name '%s'", s);
    }
    char *end;
    errno = 0;
    if (!strncmp(s, "0x", 2))
        return strtoull(s, &end, 16);
    double d = strtod(s, &end);
    if (end == s || errno)
        die("bad number '%s'", s);
    double mul = 1;
    if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "s"))
        mul = 1e9;
    else if (*end && strcmp(end, "ns"))
        die("bad number suffix in '%s'", s);
    return (uint64_t)(d * mul + 0.5);
}

/* Splits "a,b,c" hex words into u64s (ips) or bytes (build_id). */
static size_t parse_hexlist(const char *s, uint8_t *out, size_t cap, int words)
{
    size_t n = 0;
    while (*s) {
        char *end;
        uint64_t v = strtoull(s, &end, 16);
        if (end == s)
            die("bad hex list '%s'", s);
        size_t w = words ? 8 : 1;
        if (n + w > cap)
            die("hex list too long: '%s'", s);
        for (size_t i = 0; i < w; i++)
            out[n + i] = (uint8_t)(v >> (8 * i));
        n += w;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* Finds the enum jst_call whose name prefixes the exact API name, e.g.
 * cuCtxCreate for "cuCtxCreate_v4"; the longest such name wins. */
static unsigned call_id_for(const char *api)
{
    unsigned best = 0;
    size_t best_len = 0;
    for (unsigned c = 1; c < JST_CALL_MAX_; c++) {
        const char *n = jst_call_name(c);
        size_t l = n ? strlen(n) : 0;
        if (l > best_len && !strncmp(api, n, l) && (api[l] == 0 || api[l] == '_')) {
            best = c;
            best_len = l;
        }
    }
    return best;
}

/* Next whitespace-separated token; a value may be "quoted". Modifies line. */
static char *next_token(char **pp)
{
    char *p = *pp;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p || *p == '#')
        return NULL;
    char *tok = p, *w = p;
    int quoted = 0;
    while (*p && (quoted || !isspace((unsigned char)*p))) {
        if (*p == '"') {
            quoted = !quoted;
            p++;
            continue;
        }
        if (quoted && *p == '\\' && p[1]) {
            p++;
            if (*p == 'n') {
                *w++ = '\n';
                p++;
                continue;
            }
            if (*p == 'x' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
                char hex[3] = {p[1], p[2], 0};
                *w++ = (char)strtoul(hex, NULL, 16);
                p += 3;
                continue;
            }
        }
        *w++ = *p++;
    }
    if (*p)
        p++;
    *w = 0;
    *pp = p;
    return tok;
}

int main(int argc, char **argv)
{
    int truncate = 0, batch = 0, ai = 1;
    for (; ai < argc && !strncmp(argv[ai], "--", 2); ai++) {
        if (!strcmp(argv[ai], "--truncate"))
            truncate = 1;
        else if (!strcmp(argv[ai], "--batch"))
            batch = 1;
        else
            break;
    }
    if (ai >= argc) {
        fprintf(stderr, "usage: gen_trace [--truncate] [--batch] OUT.jst [SPEC]\n");
        return 2;
    }
    const char *out = argv[ai++];
    FILE *in = stdin;
    if (ai < argc && !(in = fopen(argv[ai], "r"))) {
        perror(argv[ai]);
        return 2;
    }
    remove(out);
    struct jst_writer *w = jst_writer_open(out);
    if (!w) {
        perror(out);
        return 2;
    }
    static uint8_t buf[4 << 20];
    static uint8_t bytes[1 << 16];
    char *line = NULL; /* a line of any length: a deep stack is long */
    size_t line_cap = 0;
    uint64_t seq = 0, pid = 0;
    while (getline(&line, &line_cap, in) >= 0) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        char *p = line, *tok = next_token(&p);
        if (!tok)
            continue;
        unsigned long repeat = 1;
        if (!strcmp(tok, "repeat")) {
            char *n = next_token(&p);
            repeat = n ? strtoul(n, NULL, 10) : 0;
            if (!repeat || !(tok = next_token(&p)))
                die("expected repeat N <record>%s", "");
        }
        uint16_t type = 0;
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (!strcmp(types[i].name, tok))
                type = types[i].type;
        if (!type)
            die("unknown record type '%s'", tok);
        struct jst_rec r;
        jst_rec_begin(&r, buf, sizeof buf, type);
        int have_seq = 0, have_tid = 0, have_call_id = 0;
        const char *api = NULL;
        while ((tok = next_token(&p))) {
            char *eq = strchr(tok, '=');
            if (!eq)
                die("expected key=value, got '%s'", tok);
            *eq = 0;
            const char *val = eq + 1;
            char *star = strchr(tok, '*');
            size_t fill = 0;
            if (star) { /* key*N=c: N times c */
                *star = 0;
                fill = strtoul(star + 1, NULL, 10);
            }
            const struct keydef *k = NULL;
            struct keydef raw = {NULL, 0, V_U64, NULL};
            for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
                if (!strcmp(keys[i].name, tok))
                    k = &keys[i];
            if (!k && !strncmp(tok, "key_", 4)) { /* a key with no name: a number */
                raw.key = (uint16_t)strtoul(tok + 4, NULL, 10);
                k = &raw;
            }
            if (!k)
                die("unknown key '%s'", tok);
            switch (k->kind) {
            case V_U64:
                jst_rec_u64(&r, k->key, parse_u64(val, k->names));
                break;
            case V_I64:
                jst_rec_i64(&r, k->key, strtoll(val, NULL, 0));
                break;
            case V_STR:
                if (star) {
                    char *t = malloc(fill + 1);
                    if (!t)
                        die("out of memory for %s", tok);
                    memset(t, *val ? *val : ' ', fill);
                    t[fill] = 0;
                    jst_rec_str(&r, k->key, t);
                    free(t);
                    break;
                }
                jst_rec_str(&r, k->key, val);
                break;
            case V_IPS:
            case V_HEXBYTES:
                jst_rec_bytes(&r, k->key, bytes,
                              parse_hexlist(val, bytes, sizeof bytes, k->kind == V_IPS));
                break;
            }
            have_seq |= k->key == JST_F_SEQ;
            have_tid |= k->key == JST_F_TID;
            have_call_id |= k->key == JST_F_CALL_ID;
            if (k->key == JST_F_PID && type == JST_REC_PROCESS)
                pid = parse_u64(val, NULL);
            if (k->key == JST_F_CALL)
                api = val;
        }
        if (type == JST_REC_CALL || type == JST_REC_BEGIN) {
            if (!have_seq)
                jst_rec_u64(&r, JST_F_SEQ, ++seq);
            if (!have_tid)
                jst_rec_u64(&r, JST_F_TID, pid);
            if (!have_call_id && api)
                jst_rec_u64(&r, JST_F_CALL_ID, call_id_for(api));
        }
        if (r.overflow)
            die("record too large%s", "");
        for (unsigned long i = 0; i < repeat; i++) {
            if (jst_writer_emit(w, &r, !batch) < 0) {
                perror(out);
                return 2;
            }
        }
    }
    free(line);
    if (truncate) {
        jst_writer_abandon(w);
        return 0;
    }
    if (jst_writer_close(w) < 0) {
        perror(out);
        return 2;
    }
    return 0;
}
