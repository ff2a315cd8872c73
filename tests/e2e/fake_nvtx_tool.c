/*
 * A stand-in NVTX tool (test double) for the user's own NVTX_INJECTION64_PATH:
 * it attaches to NVTX's push callback and prints "tool push NAME" on stderr
 * for each nvtxRangePushA, so a test sees that this tool, not jitstall, got
 * the ranges. The numbers are NVTX's injection interface (docs/DRIVER.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*tool_fn)(void);
struct tool_callbacks {
    size_t struct_size;
    int (*get_module_table)(int module, tool_fn ***table, unsigned *size);
};

static int tool_push_a(const char *m)
{
    fprintf(stderr, "tool push %s\n", m ? m : "");
    return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *(*get)(uint32_t))
{
    const struct tool_callbacks *cb = get(1); /* NVTX_ETID_CALLBACKS */
    tool_fn **t = NULL;
    unsigned n = 0;
    if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_table(1, &t, &n) || !t || n <= 9)
        return 0;
    *t[9] = (tool_fn)tool_push_a; /* CORE RangePushA */
    return 1;
}
