/*
 * Names for everything numeric in a trace: record types, field keys and the
 * enums of include/jitstall/format.h. `jitstall dump` and the analyzer print
 * these; the key names are also the JSON member names, so they are stable.
 * Key names come from the schema table, common/schema.h.
 */
#include <stddef.h>
#include "schema.h"
#include "trace.h"

#define JST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Looks v up in a sparse table; NULL for holes and out-of-range values. */
static const char *table_name(const char *const *tab, size_t n, unsigned v)
{
    return v < n ? tab[v] : NULL;
}

static const char *const rec_type_names[] = {
    [JST_REC_PROCESS] = "process",
    [JST_REC_DEVICE] = "device",
    [JST_REC_CALL] = "call",
    [JST_REC_CACHE_STATE] = "cache_state",
    [JST_REC_STACK] = "stack",
    [JST_REC_MODMAP] = "modmap",
    [JST_REC_CUPTI_JIT] = "cupti_jit",
    [JST_REC_NOTE] = "note",
    [JST_REC_END] = "end",
    [JST_REC_BEGIN] = "begin",
    [JST_REC_RANGE] = "range",
    [JST_REC_PROGRESS] = "progress",
    [JST_REC_COMPILE] = "compile",
    [JST_REC_SAMPLE] = "sample",
    [JST_REC_FW_CACHE] = "fw_cache",
    [JST_REC_REAP] = "reap",
    [JST_REC_READY] = "ready",
    [JST_REC_FW_EVENT] = "fw_event",
};

/* Each key's name, kind and print rule, from the schema (common/schema.h). */
#define PLAIN .print = JST_PRINT_PLAIN
#define HEX .print = JST_PRINT_HEX
#define ENUM(fn) .print = JST_PRINT_ENUM, .enum_name = fn
#define LIST(array) .print = JST_PRINT_LIST, .list_name = array
#define REPEATED .print = JST_PRINT_REPEATED
#define U64S .print = JST_PRINT_U64S
#define JST_KEY_ROW(key, nm, kd, print) [JST_F_##key] = {.name = nm, .kind = JST_K_##kd, print},
static const struct jst_key_info key_info[] = {JST_KEYS(JST_KEY_ROW)};
#undef JST_KEY_ROW
#undef PLAIN
#undef HEX
#undef ENUM
#undef LIST
#undef REPEATED
#undef U64S

static const char *const call_names[] = {
    [JST_CALL_cuInit] = "cuInit",
    [JST_CALL_cuCtxCreate] = "cuCtxCreate",
    [JST_CALL_cuDevicePrimaryCtxRetain] = "cuDevicePrimaryCtxRetain",
    [JST_CALL_cuModuleLoad] = "cuModuleLoad",
    [JST_CALL_cuModuleLoadData] = "cuModuleLoadData",
    [JST_CALL_cuModuleLoadDataEx] = "cuModuleLoadDataEx",
    [JST_CALL_cuModuleLoadFatBinary] = "cuModuleLoadFatBinary",
    [JST_CALL_cuLibraryLoadData] = "cuLibraryLoadData",
    [JST_CALL_cuLibraryLoadFromFile] = "cuLibraryLoadFromFile",
    [JST_CALL_cuModuleGetFunction] = "cuModuleGetFunction",
    [JST_CALL_cuLibraryGetKernel] = "cuLibraryGetKernel",
    [JST_CALL_cuKernelGetFunction] = "cuKernelGetFunction",
    [JST_CALL_cuLinkCreate] = "cuLinkCreate",
    [JST_CALL_cuLinkAddData] = "cuLinkAddData",
    [JST_CALL_cuLinkAddFile] = "cuLinkAddFile",
    [JST_CALL_cuLinkComplete] = "cuLinkComplete",
    [JST_CALL_cuLaunchKernel] = "cuLaunchKernel",
    [JST_CALL_cuLaunchKernelEx] = "cuLaunchKernelEx",
    [JST_CALL_cuModuleUnload] = "cuModuleUnload",
    [JST_CALL_cuLibraryUnload] = "cuLibraryUnload",
    [JST_CALL_nvrtcCompileProgram] = "nvrtcCompileProgram",
    [JST_CALL_nvJitLinkComplete] = "nvJitLinkComplete",
    [JST_CALL_nvvmCompileProgram] = "nvvmCompileProgram",
    [JST_CALL_nvPTXCompilerCompile] = "nvPTXCompilerCompile",
    [JST_CALL_cuStreamBeginCapture] = "cuStreamBeginCapture",
    [JST_CALL_cuStreamEndCapture] = "cuStreamEndCapture",
    [JST_CALL_cuGraphInstantiate] = "cuGraphInstantiate",
};

static const char *const verdict_names[] = {
    [JST_V_NONE] = "none",
    [JST_V_SASS] = "sass",
    [JST_V_PTX_JIT] = "ptx_jit",
    [JST_V_FORCED_JIT] = "forced_jit",
    [JST_V_NO_COMPATIBLE] = "no_compatible",
    [JST_V_JIT_DISABLED] = "jit_disabled",
    [JST_V_DAMAGED] = "damaged",
    [JST_V_PTX_TOO_NEW] = "ptx_too_new",
    [JST_V_OTHER_GPUS] = "other_gpus",
};

static const char *const cache_names[] = {
    [JST_C_NONE] = "none",
    [JST_C_HIT] = "hit",
    [JST_C_MISS_STORED] = "miss_stored",
    [JST_C_MISS_NOT_STORED] = "miss_not_stored",
    [JST_C_UNKNOWN] = "unknown",
};

static const char *const cache_reason_names[] = {
    [JST_CR_NONE] = "none",           [JST_CR_DISABLED] = "disabled",
    [JST_CR_READ_ONLY] = "read_only", [JST_CR_TOO_SMALL] = "too_small",
    [JST_CR_NO_DIR] = "no_dir",
};

static const char *const image_kind_names[] = {
    [JST_IMG_UNKNOWN] = "unknown", [JST_IMG_FATBIN_WRAPPER] = "fatbin_wrapper",
    [JST_IMG_FATBIN] = "fatbin",   [JST_IMG_PTX] = "ptx",
    [JST_IMG_CUBIN] = "cubin",     [JST_IMG_FILE] = "file",
    [JST_IMG_LTOIR] = "ltoir",
};

static const char *const route_names[] = {
    [JST_ROUTE_DIRECT] = "direct",
    [JST_ROUTE_DLSYM] = "dlsym",
    [JST_ROUTE_PROCADDR] = "procaddr",
};

static const char *const cupti_op_names[] = {
    [JST_CUPTI_COMPILE] = "compile",
    [JST_CUPTI_CACHE_LOAD] = "cache_load",
    [JST_CUPTI_CACHE_STORE] = "cache_store",
};

static const char *const range_op_names[] = {
    [JST_RANGE_PUSH] = "push",
    [JST_RANGE_POP] = "pop",
    [JST_RANGE_START] = "start",
    [JST_RANGE_END] = "end",
};

static const char *const spawn_names[] = {
    [JST_SPAWN_EXEC] = "exec",
    [JST_SPAWN_POSIX] = "posix_spawn",
    [JST_SPAWN_SYSTEM] = "system",
    [JST_SPAWN_POPEN] = "popen",
};

static const char *const mod_event_names[] = {
    [JST_MOD_INITIAL] = "initial",
    [JST_MOD_DLOPEN] = "dlopen",
    [JST_MOD_DLCLOSE] = "dlclose",
};

static const char *const trace_stop_names[] = {
    [JST_STOP_DISK_FULL] = "disk_full",
    [JST_STOP_FILE_LIMIT] = "file_size_limit",
    [JST_STOP_NO_FDS] = "no_descriptors",
    [JST_STOP_WRITE_ERROR] = "write_error",
};

/* The name lookups of the enum tables above, declared in common/trace.h. */
#define JST_NAME_FN(fn, tab)                                                                       \
    const char *fn(unsigned v)                                                                     \
    {                                                                                              \
        return table_name(tab, JST_ARRAY_SIZE(tab), v);                                            \
    }
JST_NAME_FN(jst_call_name, call_names)
JST_NAME_FN(jst_verdict_name, verdict_names)
JST_NAME_FN(jst_cache_name, cache_names)
JST_NAME_FN(jst_cache_reason_name, cache_reason_names)
JST_NAME_FN(jst_image_kind_name, image_kind_names)
JST_NAME_FN(jst_route_name, route_names)
JST_NAME_FN(jst_cupti_op_name, cupti_op_names)
JST_NAME_FN(jst_mod_event_name, mod_event_names)
JST_NAME_FN(jst_range_op_name, range_op_names)
JST_NAME_FN(jst_spawn_name, spawn_names)
JST_NAME_FN(jst_trace_stop_name, trace_stop_names)

const char *jst_rec_type_name(uint16_t type)
{
    return table_name(rec_type_names, JST_ARRAY_SIZE(rec_type_names), type);
}

const struct jst_key_info *jst_key_info(uint16_t key)
{
    return key < JST_ARRAY_SIZE(key_info) && key_info[key].name ? &key_info[key] : NULL;
}

const char *jst_key_name(uint16_t key)
{
    const struct jst_key_info *k = jst_key_info(key);
    return k ? k->name : NULL;
}

const char *jst_cache_phase_name(unsigned phase)
{
    return phase == 0 ? "start" : phase == 1 ? "exit" : NULL;
}
