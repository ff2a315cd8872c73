/*
 * jitstall trace format: the one place that defines what is on disk.
 *
 * A trace file is a 32-byte plain header (struct jst_file_header) followed by
 * checksummed blocks (version 2; version 1: one zstd stream). The decoded
 * blocks, concatenated, are a sequence of records (none spans two blocks):
 *
 *   u16 type | u16 flags (0) | u32 payload_len | payload[payload_len]
 *
 * A payload is a sequence of fields, each
 *
 *   u16 key | u8 kind | value
 *
 * where value is a u64 (kind U64/I64, 8 bytes little endian) or
 * u32 len + len bytes (kind STR/BYTES). Keys may repeat (arg, env, kernel, entry).
 * Readers skip unknown record types and unknown keys, so fields and records can
 * be added without a version bump. docs/FORMAT.md is the prose specification;
 * keep the two in step. A new key also needs its row in common/schema.h (name,
 * kind, how dump shows it) and, if the analyzer reads it, in
 * analyzer/model_schema.h (where it goes in the model).
 */
#ifndef JITSTALL_FORMAT_H
#define JITSTALL_FORMAT_H

#include <stdint.h>

#define JST_FILE_MAGIC "JSTRACE\0" /* 8 bytes, NUL included */
#define JST_FILE_MAGIC_LEN 8
/* The version this code writes, and the oldest reader version able to read it.
 * Version 2: the stream is a sequence of checksummed blocks (JST_FILE_FLAG_BLOCKS);
 * version 1 (one zstd stream) is still read. */
#define JST_FORMAT_VERSION 2
#define JST_FORMAT_COMPAT 2
/* Written little endian like every header field (bytes 0D 0C 0B 0A). A reader
 * that gets 0x0D0C0B0A holds a byte-swapped file (a writer that stored it
 * big endian) and refuses it. */
#define JST_ENDIAN_MARK 0x0A0B0C0Du
#define JST_HEADER_SIZE 32
#define JST_FILE_FLAG_ZSTD 0x1u   /* version 1: the stream is zstd frames */
#define JST_FILE_FLAG_BLOCKS 0x2u /* version 2: the stream is blocks (below) */

/* Version 2 block: a 28-byte header, then `stored` bytes of payload that
 * decode to `raw` bytes of whole records. Damage loses only its block:
 *   u8 magic[4] "JBLK" | u32 index | u32 stored | u32 raw | u8 encoding |
 *   u8 reserved[3] (0) | u32 crc32c(payload) | u32 crc32c(header bytes 0..23) */
#define JST_BLOCK_MAGIC "JBLK"
#define JST_BLOCK_HDR_SIZE 28
#define JST_BLOCK_ENC_PLAIN 0
#define JST_BLOCK_ENC_ZSTD 1 /* one zstd frame */
/* No block's stored or raw size exceeds one largest record. */
#define JST_BLOCK_MAX_SIZE (JST_REC_MAX_PAYLOAD + JST_REC_HDR_SIZE)

/* On-disk header, little endian, 32 bytes. */
struct jst_file_header {
    char magic[8];         /* JST_FILE_MAGIC */
    uint16_t version;      /* JST_FORMAT_VERSION of the writer */
    uint16_t compat;       /* oldest reader version that can read this file */
    uint32_t endian;       /* JST_ENDIAN_MARK */
    uint32_t header_size;  /* JST_HEADER_SIZE; readers skip to this offset */
    uint32_t flags;        /* JST_FILE_FLAG_* */
    uint64_t reserved;     /* 0 */
};

/* Record header size in the decompressed stream. */
#define JST_REC_HDR_SIZE 8
/* No record payload may exceed this (readers reject larger as damaged). */
#define JST_REC_MAX_PAYLOAD (64u << 20)

/* Field kinds. */
enum jst_kind {
    JST_K_U64 = 1,
    JST_K_I64 = 2,
    JST_K_STR = 3,   /* UTF-8 text, not NUL terminated */
    JST_K_BYTES = 4, /* opaque bytes; arrays of u64 are little endian */
};

/* Record types. */
enum jst_rec_type {
    JST_REC_PROCESS = 1,     /* first record: who and when */
    JST_REC_DEVICE = 2,      /* one per device, after cuInit succeeded */
    JST_REC_CALL = 3,        /* one hooked driver call */
    JST_REC_CACHE_STATE = 4, /* JIT cache snapshot, at start and at exit */
    JST_REC_STACK = 5,       /* a distinct call stack, referred to by JST_F_STACK_ID */
    JST_REC_MODMAP = 6,      /* a loaded ELF object: initial map, dlopen, dlclose */
    JST_REC_CUPTI_JIT = 7,   /* CUPTI JIT activity (JITSTALL_CUPTI=1) */
    JST_REC_NOTE = 8,        /* a message from jitstall itself (e.g. libcupti not found) */
    JST_REC_END = 9,         /* last record, written at exit */
    JST_REC_BEGIN = 10,      /* a load, link step or runtime compile about to call the
                                real function: what is known before it, same seq as
                                the call record that follows when it returns */
    JST_REC_RANGE = 11,      /* an NVTX range event (push/pop, domain start/end) */
    JST_REC_PROGRESS = 12,   /* still running: written about once a second while a
                                BEGIN has no call record yet (docs/FORMAT.md) */
    JST_REC_COMPILE = 13,    /* a compiler the process ran as a child (ptxas, nvcc,
                                gcc...): spawn, reap, arguments, the parent's stack */
    JST_REC_SAMPLE = 14,     /* Python frames sampled on a thread before a first launch
                                that followed compile work: one distinct stack each */
    JST_REC_FW_CACHE = 15,   /* a framework's compile cache (Triton, Inductor, JAX,
                                Numba, CuPy) as found when Python or a compiler was seen */
    JST_REC_REAP = 16,       /* a wait call of the process reaped a child that ended:
                                its pid, wait status and the time */
    JST_REC_READY = 17,      /* the program said it is ready: the moment, and how */
    JST_REC_FW_EVENT = 18,   /* a framework's own report of one of its compiles or
                                compile stages (Triton's compilation listener, PyTorch's
                                compile callbacks, JAX's monitoring, Numba's events) */
    JST_REC_TYPE_MAX_
};

/* Field keys. Names (for dump --json) are in common/schema.h. */
enum jst_key {
    /* common to calls */
    JST_F_TID = 1,
    JST_F_START_NS = 2, /* CLOCK_MONOTONIC ns */
    JST_F_DUR_NS = 3,
    JST_F_RESULT = 4,    /* CUresult (nvrtcResult, nvJitLinkResult) as returned to the caller */
    JST_F_CALL_ID = 5,   /* enum jst_call */
    JST_F_CALL = 6,      /* API name as the program asked for it, e.g. "cuCtxCreate_v4" */
    JST_F_SEQ = 7,       /* per-process event sequence number */
    JST_F_STACK_ID = 8,  /* index of a JST_REC_STACK */
    JST_F_ROUTE = 9,     /* enum jst_route: how the program reached the hook */
    JST_F_SELF_NS = 10,  /* time jitstall spent in its own work for this event (on
                            end: for the whole process), real driver calls excluded */

    /* process */
    JST_F_PID = 20,
    JST_F_PPID = 21,
    JST_F_HOST = 22,
    JST_F_EXE = 23,
    JST_F_ARG = 24,          /* repeated, in order */
    JST_F_ENV = 25,          /* repeated "NAME=value", CUDA_* and JITSTALL_* only */
    JST_F_REALTIME_NS = 26,  /* CLOCK_REALTIME at the anchor */
    JST_F_MONO_NS = 27,      /* CLOCK_MONOTONIC at the anchor */
    JST_F_PROC_START_NS = 28,/* process start, on the CLOCK_MONOTONIC scale */
    JST_F_JST_VERSION = 29,  /* jitstall version string */
    JST_F_CWD = 30,

    /* device */
    JST_F_DEVICE = 40,       /* ordinal */
    JST_F_CC_MAJOR = 41,
    JST_F_CC_MINOR = 42,
    JST_F_DEV_NAME = 43,
    JST_F_DRIVER_VERSION = 44,

    /* loads, links, lookups */
    JST_F_IMAGE_KIND = 60,   /* enum jst_image_kind */
    JST_F_IMAGE_SIZE = 61,
    JST_F_IMAGE_HASH = 62,   /* jst_hash64 of the image bytes */
    JST_F_PATH = 63,         /* file path (cuModuleLoad, cuLibraryLoadFromFile, cuLinkAddFile) */
    JST_F_HANDLE = 64,       /* CUmodule / CUlibrary / CUlinkState produced or used; the
                                CUstream of a capture; the CUgraphExec instantiated */
    JST_F_FUNC = 65,         /* CUfunction / CUkernel produced or launched */
    JST_F_NAME = 66,         /* kernel or link input name */
    JST_F_SOURCE = 67,       /* ELF object holding the image pointer (dladdr), if any */
    JST_F_CTX = 68,
    JST_F_JIT_INPUT = 69,    /* CUjitInputType for cuLinkAdd* */
    JST_F_CUBIN_SIZE = 70,   /* cuLinkComplete output size */
    JST_F_LOAD_DEVICE = 71,  /* device ordinal current at the load */
    JST_F_PARENT = 72,       /* module/library handle a function was taken from */
    JST_F_NUM_OPTIONS = 73,  /* option count given to nvrtcCompileProgram */

    /* verdict of a load */
    JST_F_VERDICT = 80,      /* enum jst_verdict */
    JST_F_SASS_ARCH = 81,    /* "sm_90", "sm_90a" */
    JST_F_JIT_FROM = 82,     /* "compute_75" */
    JST_F_KERNEL = 83,       /* repeated: kernels of the JIT'd PTX (mangled) */
    JST_F_PTX_SIZE = 84,     /* uncompressed PTX bytes compiled */
    JST_F_REASON = 85,       /* one line: why this verdict */
    JST_F_CACHE = 86,        /* enum jst_cache_outcome */
    JST_F_CACHE_REASON = 87, /* enum jst_cache_reason, for MISS_NOT_STORED */
    JST_F_ENTRY = 88,        /* repeated: "KIND ARCH ZIP", e.g. "ptx compute_75 zstd" */
    JST_F_TARGET_CC = 89,    /* compute capability judged against, e.g. 90 */
    JST_F_CACHE_NEW_BYTES = 90, /* bytes the cache grew during this load */
    JST_F_CACHE_NEW_ENTRIES = 91,

    /* cache state */
    JST_F_PHASE = 100,       /* 0 at start, 1 at exit */
    JST_F_CACHE_PATH = 101,
    JST_F_CACHE_PATH_ENV = 102, /* 1 if CUDA_CACHE_PATH was set */
    JST_F_EXISTS = 103,
    JST_F_WRITABLE = 104,
    JST_F_SIZE_BYTES = 105,
    JST_F_ENTRIES = 106,
    JST_F_MAX_BYTES = 107,   /* effective CUDA_CACHE_MAXSIZE */
    JST_F_DISABLED = 108,    /* CUDA_CACHE_DISABLE=1 */

    /* stacks and module map */
    JST_F_IPS = 120,         /* BYTES: u64 instruction pointers, innermost first */
    JST_F_MOD_EVENT = 121,   /* enum jst_mod_event */
    JST_F_MOD_PATH = 122,
    JST_F_MOD_BIAS = 123,    /* load bias (dlpi_addr) */
    JST_F_BUILD_ID = 124,    /* BYTES */
    JST_F_FILE_SIZE = 125,
    JST_F_MTIME_NS = 126,
    JST_F_MOD_START = 127,   /* lowest mapped address */
    JST_F_MOD_END = 128,     /* one past the highest mapped address */

    /* Python frames of a stack (on JST_REC_STACK), 130-139 */
    JST_F_PY_FRAME = 130,    /* repeated STR "func\tfile\tline", innermost first */
    JST_F_PY_NATIVE = 131,   /* repeated u64: index in ips of the native frame that
                                runs the JST_F_PY_FRAME of the same position */

    /* CUPTI JIT activity */
    JST_F_CUPTI_OP = 140,    /* enum jst_cupti_op */
    JST_F_CUPTI_START_NS = 141, /* converted to CLOCK_MONOTONIC */
    JST_F_CUPTI_END_NS = 142,
    JST_F_CUPTI_CACHE_PATH = 143,
    JST_F_CUPTI_CACHE_SIZE = 144,
    JST_F_CUPTI_LOAD_SEQ = 145, /* JST_F_SEQ of its load, 0 if unknown (the preload writes 0) */

    /* end */
    JST_F_EXIT_STATUS = 160,
    JST_F_EVENTS = 161,
    JST_F_END_REASON = 162,  /* "exit", "atexit", "destructor", "exec" */
    JST_F_DROPPED = 163,     /* events not recorded (e.g. first launches), with a note */
    JST_F_EXEC_PATH = 220,   /* end_reason "exec": the file the process exec'd */

    /* NVTX ranges (JST_REC_RANGE), 190-199; name in JST_F_NAME, time in
       JST_F_START_NS, thread in JST_F_TID */
    JST_F_RANGE_OP = 190,    /* enum jst_range_op */
    JST_F_RANGE_ID = 191,    /* nvtxRangeId_t of a start/end pair */
    JST_F_DOMAIN = 192,      /* domain name; absent for the default domain */
    JST_F_DEPTH = 193,       /* push depth on the thread, after a push */

    /* progress (JST_REC_PROGRESS), 210-219; time in JST_F_START_NS */
    JST_F_IN_FLIGHT = 210,   /* calls begun and not yet returned */
    JST_F_SIGNAL = 211,      /* the fatal signal (SIGTERM, SIGINT) that arrived at start_ns */
    /* runtime compiler output (on nvrtcCompileProgram records), 200-209 */
    JST_F_RTC_PTX_HASH = 200,   /* jst_hash64 of the PTX text after the call, its NUL included */
    JST_F_RTC_PTX_HASH_T = 201, /* the same without the NUL */
    JST_F_RTC_PROGRAM = 202,    /* the name nvrtcCreateProgram gave the program ("kernels.cu"),
                                   at most 127 bytes */
    /* device (keys 250-259) */
    JST_F_DRIVER_RELEASE = 250, /* on JST_REC_DEVICE: the kernel module's version,
                                   "580.159.04", from /proc/driver/nvidia/version */
    /* trace health, keys 260-269 */
    JST_F_TRACE_STOP = 260, /* on JST_REC_NOTE: enum jst_trace_stop, why the preload stopped
                               writing its trace before the process ended */

    /* PTX ISA versions, 300-309 */
    JST_F_PTX_ISA = 300,        /* on a load: .version of the PTX the driver would JIT
                                   (JST_F_JIT_FROM's entry), major*10+minor (9.0 is 90) */
    JST_F_PTX_ISA_MAX = 301,    /* on a load: the newest .version of any PTX entry, same form */
    JST_F_READY_SPEC = 350,     /* READY: the JITSTALL_READY spec that fired, e.g. "nvtx:warmup_done" */
    /* CUDA graphs, 360-369 */
    JST_F_GRAPH = 360,          /* CALL: the CUgraph cuStreamEndCapture made, cuGraphInstantiate
                                   was given, or cuStreamBeginCaptureToGraph captures into */
    /* framework events (JST_REC_FW_EVENT), 370-379; the framework in JST_F_FRAMEWORK,
       what it compiled in JST_F_NAME, the span in JST_F_START_NS and JST_F_DUR_NS */
    JST_F_FW_STAGE = 370,       /* "compile" (the whole compile) or a stage: "trace", "lower",
                                   "backend", "autotune", "cache_lookup", "cache_load",
                                   "cache_store", "graph_record" */
    JST_F_FW_CACHE = 371,       /* the framework's cache outcome: "hit", "miss", "unknown" */
    JST_F_FW_DETAIL = 372,      /* what the framework called it: its event's own name
                                   ("/jax/core/compile/backend_compile_duration"), a trigger */

    /* compilers, sampled frames, framework caches (270-299) */
    JST_F_COMPILER = 270,    /* COMPILE: "ptxas", "nvcc", "cicc", "nvlink", "fatbinary",
                                "host_cc" */
    JST_F_PROGRAM = 271,     /* COMPILE: the file given to exec / posix_spawn */
    JST_F_TARGET = 272,      /* COMPILE: target from the arguments, e.g. "sm_90a" */
    JST_F_INPUT = 273,       /* COMPILE: repeated, input file names (redacted as argv) */
    JST_F_OUTPUT = 274,      /* COMPILE: output file name (-o) */
    JST_F_CHILD_PID = 275,   /* COMPILE, REAP: the child's pid */
    JST_F_WAIT_STATUS = 276, /* COMPILE, REAP: wait status the parent reaped (as waitpid gives) */
    JST_F_SPAWN_HOW = 277,   /* COMPILE: enum jst_spawn */
    JST_F_WAIT_NS = 278,     /* COMPILE: time the reaping wait call blocked */
    JST_F_OUT_SIZE = 279,    /* COMPILE: output file size after the reap */
    JST_F_FRAMEWORK = 280,   /* FW_CACHE: "triton", "inductor", "jax", "numba", "cupy" */
    JST_F_FS_TYPE = 281,     /* FW_CACHE: file system type of the mount holding the path */
    JST_F_EPHEMERAL = 282,   /* FW_CACHE: 1 tmpfs or an overlay's upper layer, else 0 */
    JST_F_ENV_NAME = 283,    /* FW_CACHE: the environment variable that sets the path */
    JST_F_MOUNT = 284,       /* FW_CACHE: mount point holding the path (or its parent) */
    JST_F_SAMPLE_NS = 285,   /* SAMPLE: time the samples of this stack stand for */
    JST_F_SAMPLES = 286,     /* SAMPLE: how many samples saw this stack */
    JST_F_BEFORE_SEQ = 287,  /* SAMPLE: seq of the first-launch call they came before */
    JST_F_PERIOD_NS = 288,   /* SAMPLE: the sampler's period */
    JST_F_WINDOW_NS = 289,   /* SAMPLE: time the thread was sampled for, in all, in the
                                window these samples belong to */
    JST_F_SAMPLER_NS = 290,  /* SAMPLE: the sampler's own time on that thread in the window */
    JST_F_END_UNSEEN = 291,  /* COMPILE: 1 when no wait of the process returned the child
                                (reaped by the kernel): no status, dur_ns ends when found gone */
    JST_F_NOT_DIR = 292,     /* FW_CACHE: 1 when the path or its nearest existing ancestor is
                                not a directory (a FIFO, a device, a file) */
    JST_F_ENTRIES_MORE = 293, /* FW_CACHE: 1 when counting stopped: entries is a lower bound */
    JST_F_PATH_LEN = 294,    /* FW_CACHE: the path's full length when cache_path is cut short */

    /* note */
    JST_F_MESSAGE = 180,
    JST_F_LEVEL = 181,       /* 0 info, 1 warning, 2 error */
};

/* How a hook was reached. */
enum jst_route {
    JST_ROUTE_DIRECT = 1,   /* exported symbol, e.g. linked with -lcuda */
    JST_ROUTE_DLSYM = 2,    /* dlsym(handle, name) */
    JST_ROUTE_PROCADDR = 3, /* cuGetProcAddress */
};

/* Hooked driver calls. Stable numbers: they are on disk. */
enum jst_call {
    JST_CALL_cuInit = 1,
    JST_CALL_cuCtxCreate = 2,            /* any version; JST_F_CALL has the exact one */
    JST_CALL_cuDevicePrimaryCtxRetain = 3,
    JST_CALL_cuModuleLoad = 4,
    JST_CALL_cuModuleLoadData = 5,
    JST_CALL_cuModuleLoadDataEx = 6,
    JST_CALL_cuModuleLoadFatBinary = 7,
    JST_CALL_cuLibraryLoadData = 8,
    JST_CALL_cuLibraryLoadFromFile = 9,
    JST_CALL_cuModuleGetFunction = 10,
    JST_CALL_cuLibraryGetKernel = 11,
    JST_CALL_cuKernelGetFunction = 12,
    JST_CALL_cuLinkCreate = 13,
    JST_CALL_cuLinkAddData = 14,
    JST_CALL_cuLinkAddFile = 15,
    JST_CALL_cuLinkComplete = 16,
    JST_CALL_cuLaunchKernel = 17,        /* first launch of a function only */
    JST_CALL_cuLaunchKernelEx = 18,      /* first launch of a function only */
    JST_CALL_cuModuleUnload = 19,
    JST_CALL_cuLibraryUnload = 20,
    JST_CALL_nvrtcCompileProgram = 21,   /* runtime compiler (NVRTC); result is nvrtcResult */
    JST_CALL_nvJitLinkComplete = 22,     /* runtime linker (nvJitLink); result is nvJitLinkResult */
    JST_CALL_nvvmCompileProgram = 23,    /* NVVM (libnvvm); result is nvvmResult */
    JST_CALL_nvPTXCompilerCompile = 24,  /* nvPTXCompiler as a shared library; nvPTXCompileResult */
    JST_CALL_cuStreamBeginCapture = 25,  /* any variant, cuStreamBeginCaptureToGraph too;
                                            JST_F_HANDLE: the stream */
    JST_CALL_cuStreamEndCapture = 26,    /* JST_F_HANDLE: the stream, JST_F_GRAPH: the graph */
    JST_CALL_cuGraphInstantiate = 27,    /* any variant (WithFlags, WithParams);
                                            JST_F_GRAPH: the graph, JST_F_HANDLE: the CUgraphExec */
    JST_CALL_MAX_
};

/* What a load was given. */
enum jst_image_kind {
    JST_IMG_UNKNOWN = 0,
    JST_IMG_FATBIN_WRAPPER = 1, /* __fatBinC_Wrapper_t, magic 0x466243B1 */
    JST_IMG_FATBIN = 2,         /* magic 0xBA55ED50 */
    JST_IMG_PTX = 3,            /* PTX text */
    JST_IMG_CUBIN = 4,          /* ELF cubin */
    JST_IMG_FILE = 5,           /* a path; the file's own kind is inspected separately */
    JST_IMG_LTOIR = 6,
};

enum jst_verdict {
    JST_V_NONE = 0,          /* not decided (not a load, or inspection skipped) */
    JST_V_SASS = 1,
    JST_V_PTX_JIT = 2,
    JST_V_FORCED_JIT = 3,    /* CUDA_FORCE_PTX_JIT made the driver JIT the PTX, SASS or not */
    JST_V_NO_COMPATIBLE = 4, /* no SASS runs and no PTX JITs (forced JIT: no PTX JITs) */
    JST_V_JIT_DISABLED = 5,  /* JIT needed (or forced) but CUDA_DISABLE_PTX_JIT forbids it */
    JST_V_DAMAGED = 6,
    JST_V_PTX_TOO_NEW = 7,   /* the PTX that would JIT has a newer .version than the driver
                                supports: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222) */
    JST_V_OTHER_GPUS = 8,    /* nothing for the target (other GPUs' SASS, PTX for newer
                                ones), in a file that carries code that runs on it: a
                                variant never needed there */
};

enum jst_cache_outcome {
    JST_C_NONE = 0,          /* no JIT, so no cache question */
    JST_C_HIT = 1,
    JST_C_MISS_STORED = 2,
    JST_C_MISS_NOT_STORED = 3,
    JST_C_UNKNOWN = 4,
};

enum jst_cache_reason {
    JST_CR_NONE = 0,
    JST_CR_DISABLED = 1,     /* CUDA_CACHE_DISABLE=1 */
    JST_CR_READ_ONLY = 2,
    JST_CR_TOO_SMALL = 3,    /* entry larger than CUDA_CACHE_MAXSIZE allows */
    JST_CR_NO_DIR = 4,       /* directory could not be created */
};

enum jst_mod_event {
    JST_MOD_INITIAL = 0,
    JST_MOD_DLOPEN = 1,
    JST_MOD_DLCLOSE = 2,
};

enum jst_range_op {
    JST_RANGE_PUSH = 1,
    JST_RANGE_POP = 2,
    JST_RANGE_START = 3,
    JST_RANGE_END = 4,
};

/* How a COMPILE record's child was started. */
enum jst_spawn {
    JST_SPAWN_EXEC = 1,  /* a child of fork or vfork (or clone) that called exec */
    JST_SPAWN_POSIX = 2, /* posix_spawn or posix_spawnp */
    JST_SPAWN_SYSTEM = 3, /* system(): a shell ran the command line */
    JST_SPAWN_POPEN = 4,  /* popen() to pclose(): a shell ran the command line */
};

/* Why the preload stopped writing a trace early (JST_F_TRACE_STOP). */
enum jst_trace_stop {
    JST_STOP_DISK_FULL = 1,  /* a write failed with ENOSPC (or EDQUOT) */
    JST_STOP_FILE_LIMIT = 2, /* RLIMIT_FSIZE reached (EFBIG), or about to be */
    JST_STOP_NO_FDS = 3,     /* file descriptors scarce: the trace gave its one up */
    JST_STOP_WRITE_ERROR = 4, /* any other write error */
};

enum jst_cupti_op {
    JST_CUPTI_COMPILE = 1,
    JST_CUPTI_CACHE_LOAD = 2,
    JST_CUPTI_CACHE_STORE = 3,
};

#endif
