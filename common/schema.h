/*
 * The field schema: one row per field key of include/jitstall/format.h (the
 * numbers live there, the on-disk spec), saying its name (also its JSON member
 * name in `jitstall dump --json`), the kind writers use, and how it is shown.
 * common/names.c expands it into jst_key_name() and jst_key_info(); dump
 * prints through jst_key_info(). Where each field goes in the analyzer's
 * model is the model's own table, analyzer/model_schema.h.
 *
 * Print column:
 *   PLAIN         a number in decimal, a string as text, bytes in hex
 *   HEX           a handle, address or hash: "0x..." (JSON doubles lose bits)
 *   ENUM(fn)      a value with a name: fn(value), decimal when fn has none
 *   LIST(array)   repeated in order; dump --json gathers it into "array"
 *   REPEATED      repeated in order, shown like PLAIN
 *   U64S          BYTES holding little-endian u64s: a list of "0x..."
 */
#ifndef JST_COMMON_SCHEMA_H
#define JST_COMMON_SCHEMA_H

/* X(KEY without JST_F_, name, kind without JST_K_, print) */
#define JST_KEYS(X)                                                       \
    X(TID, "tid", U64, PLAIN)                                             \
    X(START_NS, "start_ns", U64, PLAIN)                                   \
    X(DUR_NS, "dur_ns", U64, PLAIN)                                       \
    X(RESULT, "result", U64, PLAIN)                                       \
    X(CALL_ID, "call_id", U64, ENUM(jst_call_name))                       \
    X(CALL, "call", STR, PLAIN)                                           \
    X(SEQ, "seq", U64, PLAIN)                                             \
    X(STACK_ID, "stack_id", U64, PLAIN)                                   \
    X(ROUTE, "route", U64, ENUM(jst_route_name))                          \
    X(SELF_NS, "self_ns", U64, PLAIN)                                     \
    X(PID, "pid", U64, PLAIN)                                             \
    X(PPID, "ppid", U64, PLAIN)                                           \
    X(HOST, "host", STR, PLAIN)                                           \
    X(EXE, "exe", STR, PLAIN)                                             \
    X(ARG, "arg", STR, LIST("argv"))                                      \
    X(ENV, "env", STR, LIST("env"))                                       \
    X(REALTIME_NS, "realtime_ns", U64, PLAIN)                             \
    X(MONO_NS, "mono_ns", U64, PLAIN)                                     \
    X(PROC_START_NS, "proc_start_ns", U64, PLAIN)                         \
    X(JST_VERSION, "jst_version", STR, PLAIN)                             \
    X(CWD, "cwd", STR, PLAIN)                                             \
    X(DEVICE, "device", U64, PLAIN)                                       \
    X(CC_MAJOR, "cc_major", U64, PLAIN)                                   \
    X(CC_MINOR, "cc_minor", U64, PLAIN)                                   \
    X(DEV_NAME, "dev_name", STR, PLAIN)                                   \
    X(DRIVER_VERSION, "driver_version", U64, PLAIN)                       \
    X(IMAGE_KIND, "image_kind", U64, ENUM(jst_image_kind_name))           \
    X(IMAGE_SIZE, "image_size", U64, PLAIN)                               \
    X(IMAGE_HASH, "image_hash", U64, HEX)                                 \
    X(PATH, "path", STR, PLAIN)                                           \
    X(HANDLE, "handle", U64, HEX)                                         \
    X(FUNC, "func", U64, HEX)                                             \
    X(NAME, "name", STR, PLAIN)                                           \
    X(SOURCE, "source", STR, PLAIN)                                       \
    X(CTX, "ctx", U64, HEX)                                               \
    X(JIT_INPUT, "jit_input", U64, PLAIN)                                 \
    X(CUBIN_SIZE, "cubin_size", U64, PLAIN)                               \
    X(LOAD_DEVICE, "load_device", U64, PLAIN)                             \
    X(PARENT, "parent", U64, HEX)                                         \
    X(NUM_OPTIONS, "num_options", U64, PLAIN)                             \
    X(VERDICT, "verdict", U64, ENUM(jst_verdict_name))                    \
    X(SASS_ARCH, "sass_arch", STR, PLAIN)                                 \
    X(JIT_FROM, "jit_from", STR, PLAIN)                                   \
    X(KERNEL, "kernel", STR, LIST("kernels"))                             \
    X(PTX_SIZE, "ptx_size", U64, PLAIN)                                   \
    X(REASON, "reason", STR, PLAIN)                                       \
    X(CACHE, "cache", U64, ENUM(jst_cache_name))                          \
    X(CACHE_REASON, "cache_reason", U64, ENUM(jst_cache_reason_name))     \
    X(ENTRY, "entry", STR, LIST("entries"))                               \
    X(TARGET_CC, "target_cc", U64, PLAIN)                                 \
    X(CACHE_NEW_BYTES, "cache_new_bytes", U64, PLAIN)                     \
    X(CACHE_NEW_ENTRIES, "cache_new_entries", U64, PLAIN)                 \
    X(PHASE, "phase", U64, ENUM(jst_cache_phase_name))                    \
    X(CACHE_PATH, "cache_path", STR, PLAIN)                               \
    X(CACHE_PATH_ENV, "cache_path_env", U64, PLAIN)                       \
    X(EXISTS, "exists", U64, PLAIN)                                       \
    X(WRITABLE, "writable", U64, PLAIN)                                   \
    X(SIZE_BYTES, "size_bytes", U64, PLAIN)                               \
    X(ENTRIES, "entries", U64, PLAIN)                                     \
    X(MAX_BYTES, "max_bytes", U64, PLAIN)                                 \
    X(DISABLED, "disabled", U64, PLAIN)                                   \
    X(IPS, "ips", BYTES, U64S)                                            \
    X(MOD_EVENT, "mod_event", U64, ENUM(jst_mod_event_name))              \
    X(MOD_PATH, "mod_path", STR, PLAIN)                                   \
    X(MOD_BIAS, "mod_bias", U64, HEX)                                     \
    X(BUILD_ID, "build_id", BYTES, PLAIN)                                 \
    X(FILE_SIZE, "file_size", U64, PLAIN)                                 \
    X(MTIME_NS, "mtime_ns", U64, PLAIN)                                   \
    X(MOD_START, "mod_start", U64, HEX)                                   \
    X(MOD_END, "mod_end", U64, HEX)                                       \
    X(PY_FRAME, "py_frame", STR, REPEATED)                                \
    X(PY_NATIVE, "py_native", U64, REPEATED)                              \
    X(CUPTI_OP, "cupti_op", U64, ENUM(jst_cupti_op_name))                 \
    X(CUPTI_START_NS, "cupti_start_ns", U64, PLAIN)                       \
    X(CUPTI_END_NS, "cupti_end_ns", U64, PLAIN)                           \
    X(CUPTI_CACHE_PATH, "cupti_cache_path", STR, PLAIN)                   \
    X(CUPTI_CACHE_SIZE, "cupti_cache_size", U64, PLAIN)                   \
    X(CUPTI_LOAD_SEQ, "cupti_load_seq", U64, PLAIN)                       \
    X(EXIT_STATUS, "exit_status", I64, PLAIN)                             \
    X(EVENTS, "events", U64, PLAIN)                                       \
    X(END_REASON, "end_reason", STR, PLAIN)                               \
    X(DROPPED, "dropped", U64, PLAIN)                                     \
    X(EXEC_PATH, "exec_path", STR, PLAIN)                                 \
    X(RANGE_OP, "range_op", U64, ENUM(jst_range_op_name))                 \
    X(RANGE_ID, "range_id", U64, PLAIN)                                   \
    X(DOMAIN, "domain", STR, PLAIN)                                       \
    X(DEPTH, "depth", U64, PLAIN)                                         \
    X(IN_FLIGHT, "in_flight", U64, PLAIN)                                 \
    X(SIGNAL, "signal", U64, PLAIN)                                       \
    X(RTC_PTX_HASH, "rtc_ptx_hash", U64, HEX)                             \
    X(RTC_PTX_HASH_T, "rtc_ptx_hash_t", U64, HEX)                         \
    X(DRIVER_RELEASE, "driver_release", STR, PLAIN)                       \
    X(COMPILER, "compiler", STR, PLAIN)                                   \
    X(PROGRAM, "program", STR, PLAIN)                                     \
    X(TARGET, "target", STR, PLAIN)                                       \
    X(INPUT, "input", STR, LIST("inputs"))                                \
    X(OUTPUT, "output", STR, PLAIN)                                       \
    X(CHILD_PID, "child_pid", U64, PLAIN)                                 \
    X(WAIT_STATUS, "wait_status", U64, PLAIN)                             \
    X(SPAWN_HOW, "spawn_how", U64, ENUM(jst_spawn_name))                  \
    X(WAIT_NS, "wait_ns", U64, PLAIN)                                     \
    X(OUT_SIZE, "out_size", U64, PLAIN)                                   \
    X(FRAMEWORK, "framework", STR, PLAIN)                                 \
    X(FS_TYPE, "fs_type", STR, PLAIN)                                     \
    X(EPHEMERAL, "ephemeral", U64, PLAIN)                                 \
    X(ENV_NAME, "env_name", STR, PLAIN)                                   \
    X(MOUNT, "mount", STR, PLAIN)                                         \
    X(SAMPLE_NS, "sample_ns", U64, PLAIN)                                 \
    X(SAMPLES, "samples", U64, PLAIN)                                     \
    X(BEFORE_SEQ, "before_seq", U64, PLAIN)                               \
    X(PERIOD_NS, "period_ns", U64, PLAIN)                                 \
    X(WINDOW_NS, "window_ns", U64, PLAIN)                                 \
    X(SAMPLER_NS, "sampler_ns", U64, PLAIN)                               \
    X(END_UNSEEN, "end_unseen", U64, PLAIN)                               \
    X(NOT_DIR, "not_dir", U64, PLAIN)                                     \
    X(ENTRIES_MORE, "entries_more", U64, PLAIN)                           \
    X(PATH_LEN, "cache_path_len", U64, PLAIN)                             \
    X(TRACE_STOP, "trace_stop", U64, ENUM(jst_trace_stop_name))           \
    X(PTX_ISA, "ptx_isa", U64, PLAIN)                                     \
    X(PTX_ISA_MAX, "ptx_isa_max", U64, PLAIN)                             \
    X(READY_SPEC, "ready_spec", STR, PLAIN)                               \
    X(GRAPH, "graph", U64, HEX)                                           \
    X(FW_STAGE, "fw_stage", STR, PLAIN)                                   \
    X(FW_CACHE, "fw_cache_outcome", STR, PLAIN)                          \
    X(FW_DETAIL, "fw_detail", STR, PLAIN)                                 \
    X(RTC_PROGRAM, "rtc_program", STR, PLAIN)                             \
    X(MESSAGE, "message", STR, PLAIN)                                     \
    X(LEVEL, "level", U64, PLAIN)

#endif
