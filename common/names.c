/*
 * Names for everything numeric in a trace: record types, field keys and the
 * enums of include/jitstall/format.h. `jitstall dump` and the analyzer print
 * these; the key names are also the JSON member names, so they are stable.
 */
#include <stddef.h>
#include "trace.h"

#define JST_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Looks v up in a sparse table; NULL for holes and out-of-range values. */
static const char *table_name(const char *const *tab, size_t n, unsigned v)
{
    return v < n ? tab[v] : NULL;
}

static const char *const rec_type_names[] = {
    [JST_REC_PROCESS] = "process",         [JST_REC_DEVICE] = "device", [JST_REC_CALL] = "call",
    [JST_REC_CACHE_STATE] = "cache_state", [JST_REC_STACK] = "stack",   [JST_REC_MODMAP] = "modmap",
    [JST_REC_CUPTI_JIT] = "cupti_jit",     [JST_REC_NOTE] = "note",     [JST_REC_END] = "end",
    [JST_REC_BEGIN] = "begin",             [JST_REC_RANGE] = "range",
    [JST_REC_PROGRESS] = "progress",
};

/* The snake_case spelling of each enum jst_key name without JST_F_. */
static const char *const key_names[] = {
    [JST_F_TID] = "tid",
    [JST_F_START_NS] = "start_ns",
    [JST_F_DUR_NS] = "dur_ns",
    [JST_F_RESULT] = "result",
    [JST_F_CALL_ID] = "call_id",
    [JST_F_CALL] = "call",
    [JST_F_SEQ] = "seq",
    [JST_F_STACK_ID] = "stack_id",
    [JST_F_ROUTE] = "route",
    [JST_F_SELF_NS] = "self_ns",
    [JST_F_PID] = "pid",
    [JST_F_PPID] = "ppid",
    [JST_F_HOST] = "host",
    [JST_F_EXE] = "exe",
    [JST_F_ARG] = "arg",
    [JST_F_ENV] = "env",
    [JST_F_REALTIME_NS] = "realtime_ns",
    [JST_F_MONO_NS] = "mono_ns",
    [JST_F_PROC_START_NS] = "proc_start_ns",
    [JST_F_JST_VERSION] = "jst_version",
    [JST_F_CWD] = "cwd",
    [JST_F_DEVICE] = "device",
    [JST_F_CC_MAJOR] = "cc_major",
    [JST_F_CC_MINOR] = "cc_minor",
    [JST_F_DEV_NAME] = "dev_name",
    [JST_F_DRIVER_VERSION] = "driver_version",
    [JST_F_IMAGE_KIND] = "image_kind",
    [JST_F_IMAGE_SIZE] = "image_size",
    [JST_F_IMAGE_HASH] = "image_hash",
    [JST_F_PATH] = "path",
    [JST_F_HANDLE] = "handle",
    [JST_F_FUNC] = "func",
    [JST_F_NAME] = "name",
    [JST_F_SOURCE] = "source",
    [JST_F_CTX] = "ctx",
    [JST_F_JIT_INPUT] = "jit_input",
    [JST_F_CUBIN_SIZE] = "cubin_size",
    [JST_F_LOAD_DEVICE] = "load_device",
    [JST_F_PARENT] = "parent",
    [JST_F_NUM_OPTIONS] = "num_options",
    [JST_F_VERDICT] = "verdict",
    [JST_F_SASS_ARCH] = "sass_arch",
    [JST_F_JIT_FROM] = "jit_from",
    [JST_F_KERNEL] = "kernel",
    [JST_F_PTX_SIZE] = "ptx_size",
    [JST_F_REASON] = "reason",
    [JST_F_CACHE] = "cache",
    [JST_F_CACHE_REASON] = "cache_reason",
    [JST_F_ENTRY] = "entry",
    [JST_F_TARGET_CC] = "target_cc",
    [JST_F_CACHE_NEW_BYTES] = "cache_new_bytes",
    [JST_F_CACHE_NEW_ENTRIES] = "cache_new_entries",
    [JST_F_PHASE] = "phase",
    [JST_F_CACHE_PATH] = "cache_path",
    [JST_F_CACHE_PATH_ENV] = "cache_path_env",
    [JST_F_EXISTS] = "exists",
    [JST_F_WRITABLE] = "writable",
    [JST_F_SIZE_BYTES] = "size_bytes",
    [JST_F_ENTRIES] = "entries",
    [JST_F_MAX_BYTES] = "max_bytes",
    [JST_F_DISABLED] = "disabled",
    [JST_F_IPS] = "ips",
    [JST_F_MOD_EVENT] = "mod_event",
    [JST_F_MOD_PATH] = "mod_path",
    [JST_F_MOD_BIAS] = "mod_bias",
    [JST_F_BUILD_ID] = "build_id",
    [JST_F_FILE_SIZE] = "file_size",
    [JST_F_MTIME_NS] = "mtime_ns",
    [JST_F_MOD_START] = "mod_start",
    [JST_F_MOD_END] = "mod_end",
    [JST_F_PY_FRAME] = "py_frame",
    [JST_F_PY_NATIVE] = "py_native",
    [JST_F_CUPTI_OP] = "cupti_op",
    [JST_F_CUPTI_START_NS] = "cupti_start_ns",
    [JST_F_CUPTI_END_NS] = "cupti_end_ns",
    [JST_F_CUPTI_CACHE_PATH] = "cupti_cache_path",
    [JST_F_CUPTI_CACHE_SIZE] = "cupti_cache_size",
    [JST_F_CUPTI_LOAD_SEQ] = "cupti_load_seq",
    [JST_F_EXIT_STATUS] = "exit_status",
    [JST_F_EVENTS] = "events",
    [JST_F_END_REASON] = "end_reason",
    [JST_F_DROPPED] = "dropped",
    [JST_F_EXEC_PATH] = "exec_path",
    [JST_F_RANGE_OP] = "range_op",
    [JST_F_RANGE_ID] = "range_id",
    [JST_F_DOMAIN] = "domain",
    [JST_F_DEPTH] = "depth",
    [JST_F_IN_FLIGHT] = "in_flight",
    [JST_F_RTC_PTX_HASH] = "rtc_ptx_hash",
    [JST_F_RTC_PTX_HASH_T] = "rtc_ptx_hash_t",
    [JST_F_DRIVER_RELEASE] = "driver_release",
    [JST_F_MESSAGE] = "message",
    [JST_F_LEVEL] = "level",
};

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
};

static const char *const verdict_names[] = {
    [JST_V_NONE] = "none",
    [JST_V_SASS] = "sass",
    [JST_V_PTX_JIT] = "ptx_jit",
    [JST_V_FORCED_JIT] = "forced_jit",
    [JST_V_NO_COMPATIBLE] = "no_compatible",
    [JST_V_JIT_DISABLED] = "jit_disabled",
    [JST_V_DAMAGED] = "damaged",
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

static const char *const mod_event_names[] = {
    [JST_MOD_INITIAL] = "initial",
    [JST_MOD_DLOPEN] = "dlopen",
    [JST_MOD_DLCLOSE] = "dlclose",
};

const char *jst_rec_type_name(uint16_t type)
{
    return table_name(rec_type_names, JST_ARRAY_SIZE(rec_type_names), type);
}

const char *jst_key_name(uint16_t key)
{
    return table_name(key_names, JST_ARRAY_SIZE(key_names), key);
}

const char *jst_call_name(unsigned call)
{
    return table_name(call_names, JST_ARRAY_SIZE(call_names), call);
}

const char *jst_verdict_name(unsigned v)
{
    return table_name(verdict_names, JST_ARRAY_SIZE(verdict_names), v);
}

const char *jst_cache_name(unsigned c)
{
    return table_name(cache_names, JST_ARRAY_SIZE(cache_names), c);
}

const char *jst_cache_reason_name(unsigned r)
{
    return table_name(cache_reason_names, JST_ARRAY_SIZE(cache_reason_names), r);
}

const char *jst_image_kind_name(unsigned k)
{
    return table_name(image_kind_names, JST_ARRAY_SIZE(image_kind_names), k);
}

const char *jst_route_name(unsigned r)
{
    return table_name(route_names, JST_ARRAY_SIZE(route_names), r);
}

const char *jst_cupti_op_name(unsigned op)
{
    return table_name(cupti_op_names, JST_ARRAY_SIZE(cupti_op_names), op);
}

const char *jst_mod_event_name(unsigned e)
{
    return table_name(mod_event_names, JST_ARRAY_SIZE(mod_event_names), e);
}

const char *jst_range_op_name(unsigned op)
{
    return table_name(range_op_names, JST_ARRAY_SIZE(range_op_names), op);
}
