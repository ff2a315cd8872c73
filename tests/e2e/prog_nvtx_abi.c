/*
 * End-to-end program for the NVTX injection's handling of NVTX's tables
 * (docs/DRIVER.md, "NVTX"): run under the preload, it calls the preload's
 * InitializeInjectionNvtx2 itself with export tables shaped like older or
 * damaged NVTX copies, and prints what the injection did: whether it
 * attached, which callback slots it filled, and that slots past the size
 * NVTX reported were left alone. Then it pushes two ranges through the
 * filled RangePushEx slot, one with an event-attribute structure whose size
 * field is too small to hold the message (its name must not be read) and
 * one whole, then a push and a start with wide names and a start with the
 * attribute structure, and calls cuInit so that a trace is written.
 */
#include <cuda.h>
#include <string.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

typedef void (*fn_t)(void);
typedef const void *(*get_t)(uint32_t);
typedef int (*init_t)(get_t);

struct callbacks {
    size_t struct_size;
    int (*get_module_table)(int module, fn_t ***table, unsigned *size);
};

#define SLOTS 16
static fn_t core_fn[SLOTS];
static fn_t *core_tab[SLOTS];
static unsigned core_size; /* what the fake NVTX reports */
static struct callbacks cbs;

static void canary(void)
{
}

static int get_module_table(int module, fn_t ***table, unsigned *size)
{
    if (module == 1) {
        *table = core_tab;
        *size = core_size;
        return 1;
    }
    return 0; /* no other module (no CORE2) in this NVTX */
}

static const void *get_table(uint32_t id)
{
    return id == 1 ? &cbs : NULL;
}

static const void *get_none(uint32_t id)
{
    (void)id;
    return NULL;
}

/* Resets the fake CORE table: every slot holds the canary, slot 7 has no pointer. */
static void reset(unsigned size, size_t struct_size)
{
    for (int i = 0; i < SLOTS; i++) {
        core_fn[i] = canary;
        core_tab[i] = i == 7 ? NULL : &core_fn[i];
    }
    core_size = size;
    cbs.struct_size = struct_size;
    cbs.get_module_table = get_module_table;
}

static void show(const char *what, int rc)
{
    printf("%s: init %d, filled", what, rc);
    for (int i = 0; i < SLOTS; i++)
        if (core_fn[i] != canary)
            printf(" %d", i);
    printf("\n");
}

int main(void)
{
    init_t init = (init_t)dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2");
    if (!init) {
        printf("no InitializeInjectionNvtx2 (not preloaded)\n");
        return 0;
    }
    reset(12, sizeof(struct callbacks));
    show("current", init(get_table));
    reset(6, sizeof(struct callbacks)); /* an NVTX with CORE ids 1..5 only */
    show("older", init(get_table));
    reset(12, sizeof(size_t)); /* a callbacks table too small to hold the function */
    show("short-table", init(get_table));
    reset(12, sizeof(struct callbacks));
    show("no-callbacks", init(get_none));
    reset(12, sizeof(struct callbacks));
    int rc = init(get_table);
    typedef uint64_t (*start_t)(const char *);
    uint64_t a = ((start_t)core_fn[5])("a"), b = ((start_t)core_fn[5])("b");
    printf("start ids differ: %d\n", rc && a && b && a != b);

    /* nvtxEventAttributes_t v2: u16 version, u16 size, ..., i32 messageType at
     * 32, the message at 40; 48 bytes in all. */
    unsigned char attr[48];
    const char *msg = "whole";
    memset(attr, 0, sizeof attr);
    attr[0] = 2;
    attr[2] = 16; /* too small: the message is past it */
    attr[32] = 1; /* ASCII */
    memcpy(attr + 40, &msg, sizeof msg);
    typedef int (*push_ex_t)(const void *);
    typedef int (*pop_t)(void);
    ((push_ex_t)core_fn[8])(attr);
    ((pop_t)core_fn[11])();
    attr[2] = 48;
    ((push_ex_t)core_fn[8])(attr);
    ((pop_t)core_fn[11])();
    /* The wide and attribute forms of push and start. */
    typedef int (*push_w_t)(const wchar_t *);
    typedef uint64_t (*start_w_t)(const wchar_t *);
    typedef uint64_t (*start_ex_t)(const void *);
    ((push_w_t)core_fn[10])(L"wide \u00e9");
    ((pop_t)core_fn[11])();
    uint64_t c = ((start_w_t)core_fn[6])(L"wide start");
    uint64_t d = ((start_ex_t)core_fn[4])(attr);
    printf("wide and attribute start ids: %d\n", c > b && d > c);
    printf("cuInit: %d\n", (int)cuInit(0));
    return 0;
}
