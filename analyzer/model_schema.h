/*
 * Where each field of a record goes in the model (analyzer/model.h): one
 * table per record type, expanded by analyzer/model_read.c into the reader's
 * switch. Names, kinds and printing are in common/schema.h; the numbers in
 * include/jitstall/format.h.
 *
 * Rows: F(KEY, how, member), A(KEY, how, member, aux) where the value needs a
 * second member, S(KEY) where the record's reader handles the field itself.
 * how:
 *   U64, I64, UINT, BOOL  a number (U64 or I64 field) into uint64_t, int64_t,
 *                         unsigned, int (0 or 1)
 *   STR                   text, an owned copy
 *   ISTR                  text, interned in the process's string table
 *   UINT_HAS              UINT, and the int aux set to 1: the field was there
 *   STRS / ISTRS          repeated text: appended to the array member, its
 *                         count in aux (owned copies / interned)
 *   U64S                  BYTES of little-endian u64s into a uint64_t array,
 *                         its count in aux
 *   BYTES                 bytes, an owned copy, its length in aux
 * A field that is not repeated (every how but STRS and ISTRS) is taken from
 * its first occurrence in the record; later ones are ignored (docs/FORMAT.md,
 * Fields). A field of the wrong kind counts as absent.
 */
#ifndef JST_ANALYZER_MODEL_SCHEMA_H
#define JST_ANALYZER_MODEL_SCHEMA_H

/* process (1) into struct jst_process */
#define JST_MODEL_PROCESS(F, A, S)   \
    F(PID, U64, pid)                 \
    F(PPID, U64, ppid)               \
    F(HOST, STR, host)               \
    F(EXE, STR, exe)                 \
    F(CWD, STR, cwd)                 \
    F(JST_VERSION, STR, jst_version) \
    A(ARG, STRS, argv, argc)         \
    A(ENV, STRS, env, n_env)         \
    F(REALTIME_NS, U64, realtime_ns) \
    F(MONO_NS, U64, mono_ns)         \
    F(PROC_START_NS, U64, proc_start_ns)

/* device (2) into a new struct jst_device */
#define JST_MODEL_DEVICE(F, A, S)          \
    F(DEVICE, UINT, ordinal)               \
    F(CC_MAJOR, UINT, cc_major)            \
    F(CC_MINOR, UINT, cc_minor)            \
    F(DEV_NAME, STR, name)                 \
    F(DRIVER_VERSION, U64, driver_version) \
    F(DRIVER_RELEASE, STR, driver_release)

/* call (3) and begin (10) into a new struct jst_call_ev; its strings are
 * interned: calls are many and repeat the same names */
#define JST_MODEL_CALL(F, A, S)                          \
    F(SEQ, U64, seq)                                     \
    F(CALL_ID, UINT, call)                               \
    F(CALL, ISTR, call_name)                             \
    F(ROUTE, UINT, route)                                \
    F(TID, U64, tid)                                     \
    F(START_NS, U64, start_ns)                           \
    F(DUR_NS, U64, dur_ns)                               \
    F(RESULT, I64, result)                               \
    F(HANDLE, U64, handle)                               \
    F(FUNC, U64, func)                                   \
    F(PARENT, U64, parent)                               \
    F(CTX, U64, ctx)                                     \
    F(NAME, ISTR, name)                                  \
    F(PATH, ISTR, path)                                  \
    F(STACK_ID, U64, stack_id)                           \
    F(IMAGE_KIND, UINT, image_kind)                      \
    F(IMAGE_SIZE, U64, image_size)                       \
    F(IMAGE_HASH, U64, image_hash)                       \
    F(SOURCE, ISTR, source)                              \
    F(VERDICT, UINT, verdict)                            \
    F(SASS_ARCH, ISTR, sass_arch)                        \
    F(JIT_FROM, ISTR, jit_from)                          \
    F(REASON, ISTR, reason)                              \
    A(KERNEL, ISTRS, kernels, n_kernels)                 \
    A(ENTRY, ISTRS, entries, n_entries)                  \
    F(PTX_SIZE, U64, ptx_size)                           \
    F(TARGET_CC, UINT, target_cc)                        \
    F(PTX_ISA, UINT, ptx_isa)                            \
    F(PTX_ISA_MAX, UINT, ptx_isa_max)                    \
    F(CACHE, UINT, cache)                                \
    F(CACHE_REASON, UINT, cache_reason)                  \
    F(CACHE_NEW_BYTES, U64, cache_new_bytes)             \
    F(CACHE_NEW_ENTRIES, U64, cache_new_entries)         \
    A(JIT_INPUT, UINT_HAS, jit_input, has_jit_input)     \
    F(CUBIN_SIZE, U64, cubin_size)                       \
    F(RTC_PTX_HASH, U64, rtc_ptx_hash[0])                \
    F(RTC_PTX_HASH_T, U64, rtc_ptx_hash[1])              \
    A(LOAD_DEVICE, UINT_HAS, load_device, has_load_device) \
    F(GRAPH, U64, graph)                                 \
    F(RTC_PROGRAM, ISTR, rtc_program)

/* cache_state (4) into the struct jst_cache_state its phase names */
#define JST_MODEL_CACHE_STATE(F, A, S) \
    S(PHASE) /* chooses the struct: read first */ \
    F(CACHE_PATH, STR, path)           \
    F(CACHE_PATH_ENV, BOOL, from_env)  \
    F(EXISTS, BOOL, exists)            \
    F(WRITABLE, BOOL, writable)        \
    F(DISABLED, BOOL, disabled)        \
    F(SIZE_BYTES, U64, size_bytes)     \
    F(ENTRIES, U64, entries)           \
    F(MAX_BYTES, U64, max_bytes)

/* stack (5) into a new struct jst_stack */
#define JST_MODEL_STACK(F, A, S) \
    F(STACK_ID, U64, id)         \
    A(IPS, U64S, ips, n)         \
    S(PY_FRAME) /* repeated, capped, paired with py_native */ \
    S(PY_NATIVE)

/* modmap (6) into a new struct jst_modmap */
#define JST_MODEL_MODMAP(F, A, S)  \
    F(MOD_EVENT, UINT, event)      \
    F(MOD_PATH, STR, path)         \
    F(MOD_BIAS, U64, bias)         \
    F(MOD_START, U64, start)       \
    F(MOD_END, U64, end)           \
    F(FILE_SIZE, U64, file_size)   \
    F(MTIME_NS, U64, mtime_ns)     \
    A(BUILD_ID, BYTES, build_id, build_id_len)

/* cupti_jit (7) into a new struct jst_cupti_ev */
#define JST_MODEL_CUPTI(F, A, S)            \
    F(CUPTI_OP, UINT, op)                   \
    F(CUPTI_START_NS, U64, start_ns)        \
    F(CUPTI_END_NS, U64, end_ns)            \
    F(CUPTI_LOAD_SEQ, U64, load_seq)        \
    F(CUPTI_CACHE_SIZE, U64, cache_size)    \
    F(CUPTI_CACHE_PATH, STR, cache_path)

/* note (8) into struct jst_process */
#define JST_MODEL_NOTE(F, A, S)          \
    A(MESSAGE, STRS, notes, n_notes)     \
    F(TRACE_STOP, UINT, trace_stop)

/* end (9) into struct jst_process */
#define JST_MODEL_END(F, A, S)           \
    F(EXIT_STATUS, I64, exit_status)     \
    F(START_NS, U64, end_ns)             \
    F(END_REASON, STR, end_reason)       \
    F(SELF_NS, U64, self_ns)

/* range (11) into a struct jst_range_ev that analyzer/queries.c keeps */
#define JST_MODEL_RANGE(F, A, S)  \
    F(RANGE_OP, UINT, op)         \
    F(START_NS, U64, t_ns)        \
    F(TID, U64, tid)              \
    F(RANGE_ID, U64, id)          \
    F(DEPTH, U64, depth)          \
    F(NAME, STR, name)            \
    F(DOMAIN, STR, domain)

/* ready (24) into struct jst_ready (the first record only: model_read.c) */
#define JST_MODEL_READY(F, A, S) \
    F(START_NS, U64, t_ns)       \
    F(TID, U64, tid)             \
    F(READY_SPEC, STR, spec)

/* progress (12): only its time is used (analyzer/model_load.c). */

#endif
