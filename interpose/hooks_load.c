/*
 * The hooked calls that may compile: module and library loads, and the link
 * steps (cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete). Each
 * input jitstall can read is inspected before the real call and described in
 * a BEGIN record, on disk before the driver may stall; the call record, with
 * the verdict and the cache outcome, is on disk before the hook returns.
 * Each wrapper has the exact signature of the variant it stands for, calls
 * the real function exactly once with the same arguments, and returns its
 * result unchanged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "hooks_wrap.h"
#include "load.h"
#include "inflight.h"

/* A load or link step: the input jitstall reads (an image in memory, size 0
 * meaning from its headers; or a file; neither: nothing read) and what its
 * records carry beyond the call's own fields. */
struct load_step {
    const void *image;
    size_t size;
    const char *path;
    uint64_t handle;      /* written when not 0 (see step_fields) */
    int link_input;       /* a link input: its state's handle, its input type */
    CUjitInputType input; /* with link_input */
    const char *name;
};

/* The fields of s in a record: the handle, the input type, the name. The
 * call record (done) of a link input names its link state even when that is
 * NULL; a BEGIN record only a handle that is not. */
static void step_fields(struct jst_rec *rec, const struct load_step *s, int done)
{
    if (s->handle || (done && s->link_input))
        jst_rec_u64(rec, JST_F_HANDLE, s->handle);
    if (s->link_input)
        jst_rec_u64(rec, JST_F_JIT_INPUT, (uint64_t)s->input);
    if (s->name)
        jst_rec_strn(rec, JST_F_NAME, s->name, strnlen(s->name, 1024));
}

/* Starts the event of a load or link step: the stack, the inspection of
 * its input (in ld) and the BEGIN record, before the real call. */
static int step_begin(struct jst_event *ev, struct jst_load *ld, const struct jst_hook *h,
                      int route, const struct load_step *s)
{
    memset(ld, 0, sizeof *ld);
    if (!jst_event_begin_stack(ev, h, route))
        return 0;
    if (s->path)
        jst_load_pre_file(ld, s->path, 1);
    else if (s->image)
        jst_load_pre_mem(ld, s->image, s->size, 1);
    size_t cap = ld->active ? 256 * 1024 : 2048;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return 1;
    struct jst_rec rec;
    jst_inflight_open(ev, &rec, buf, cap);
    step_fields(&rec, s, 0);
    if (ld->active)
        jst_load_describe(ld, &rec);
    /* A load that carries SASS for the device returns in milliseconds; only
     * a step that may compile (or one we could not inspect) needs the
     * progress thread. */
    jst_inflight_emit(ev, &rec, !ld->active || ld->jit);
    free(buf);
    return 1;
}

/* Ends the event of a load or link step: the record, with the verdict and
 * the cache outcome (a load's always, a link input's when it was read), on
 * disk before the hook returns. */
static CUresult step_finish(struct jst_event *ev, struct jst_load *ld, CUresult r,
                            const struct load_step *s)
{
    size_t cap = 256 * 1024;
    uint8_t *buf = malloc(cap);
    if (buf) {
        struct jst_rec rec;
        jst_event_record(ev, &rec, buf, cap, r);
        step_fields(&rec, s, 1);
        if (!s->link_input || ld->active)
            jst_load_post(ld, &rec, ev->dur_ns, r);
        jst_emit(&rec, 1);
        free(buf);
    }
    jst_inflight_close(ev);
    jst_load_free(ld);
    jst_event_end(ev);
    return r;
}

/* Runs a load or link step described by step; after runs once the real
 * call has returned, before the record is made. */
#define JST_STEP_RUN(fn_t, args, step, after)                                                      \
    struct jst_load ld;                                                                            \
    JST_HOOK_RUN(fn_t, args, step_begin(&ev, &ld, h, route, &step));                               \
    after;                                                                                         \
    return step_finish(&ev, &ld, r, &step)

/* ---- loads ---- */

/* Every load: the variants differ in their arguments, in where the image is
 * (image: a pointer to it, or NULL for a file; path: the file, or NULL) and
 * in which argument receives the handle (out). */
#define JST_LOAD_HANDLER(name, params, args, image_, path_, out)                                   \
    typedef CUresult(*name##_fn) params;                                                           \
    static CUresult name(struct jst_hook *h, int route, JST_ARGS params)                           \
    {                                                                                              \
        struct load_step s = {.image = image_, .path = path_};                                     \
        JST_STEP_RUN(name##_fn, args, s, s.handle = JST_OUT(out));                                 \
    }

JST_LOAD_HANDLER(h_mload, (CUmodule * module, const char *fname), (module, fname), NULL,
                 fname ? fname : "", module)
JST_WRAP(cuModuleLoad, (CUmodule * module, const char *fname), (module, fname), h_mload)

JST_LOAD_HANDLER(h_mdata, (CUmodule * module, const void *image), (module, image), image, NULL,
                 module)
JST_WRAP(cuModuleLoadData, (CUmodule * module, const void *image), (module, image), h_mdata)
JST_WRAP(cuModuleLoadFatBinary, (CUmodule * module, const void *fatCubin), (module, fatCubin),
         h_mdata)

JST_LOAD_HANDLER(h_mdataex,
                 (CUmodule * module, const void *image, unsigned int numOptions,
                  CUjit_option *options, void **optionValues),
                 (module, image, numOptions, options, optionValues), image, NULL, module)
JST_WRAP(cuModuleLoadDataEx,
         (CUmodule * module, const void *image, unsigned int numOptions, CUjit_option *options,
          void **optionValues),
         (module, image, numOptions, options, optionValues), h_mdataex)

/* cuLibraryLoadData and cuLibraryLoadFromFile: the same options after the
 * image or the file. */
#define JST_LIB_OPT_P                                                                              \
    CUjit_option *jitOptions, void **jitOptionsValues, unsigned int numJitOptions,                 \
        CUlibraryOption *libraryOptions, void **libraryOptionValues,                               \
        unsigned int numLibraryOptions
#define JST_LIB_OPT_A                                                                              \
    jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues,              \
        numLibraryOptions

JST_LOAD_HANDLER(h_ldata, (CUlibrary * library, const void *code, JST_LIB_OPT_P),
                 (library, code, JST_LIB_OPT_A), code, NULL, library)
JST_WRAP(cuLibraryLoadData, (CUlibrary * library, const void *code, JST_LIB_OPT_P),
         (library, code, JST_LIB_OPT_A), h_ldata)

JST_LOAD_HANDLER(h_lfile, (CUlibrary * library, const char *fileName, JST_LIB_OPT_P),
                 (library, fileName, JST_LIB_OPT_A), NULL, fileName ? fileName : "", library)
JST_WRAP(cuLibraryLoadFromFile, (CUlibrary * library, const char *fileName, JST_LIB_OPT_P),
         (library, fileName, JST_LIB_OPT_A), h_lfile)

/* ---- the linker ---- */

#define JST_LCREATE_P                                                                              \
    (unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut)
#define JST_LCREATE_A (numOptions, options, optionValues, stateOut)
typedef CUresult(*lcreate_fn) JST_LCREATE_P;
static CUresult h_lcreate(struct jst_hook *h, int route, JST_UNPAREN(JST_LCREATE_P))
{
    JST_HOOK_RUN(lcreate_fn, JST_LCREATE_A, jst_event_begin_stack(&ev, h, route));
    jst_event_emit_simple(&ev, r, JST_F_HANDLE, JST_OUT(stateOut), 1);
    jst_event_end(&ev);
    return r;
}
JST_WRAP(cuLinkCreate, JST_LCREATE_P, JST_LCREATE_A, h_lcreate)
JST_WRAP(cuLinkCreate_v2, JST_LCREATE_P, JST_LCREATE_A, h_lcreate)

/* Inputs whose bytes jitstall understands. */
static int link_input_known(CUjitInputType t)
{
    return t == CU_JIT_INPUT_PTX || t == CU_JIT_INPUT_CUBIN || t == CU_JIT_INPUT_FATBINARY;
}

/* PTX added to a link is compiled in the call and cached like a load's
 * (docs/DRIVER.md, "Link steps use the JIT cache"): the same cache snapshots
 * around it give the same outcome. */
#define JST_LADD_P                                                                                 \
    (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,            \
     unsigned int numOptions, CUjit_option *options, void **optionValues)
#define JST_LADD_A (state, type, data, size, name, numOptions, options, optionValues)
typedef CUresult(*ladd_fn) JST_LADD_P;
static CUresult h_ladd(struct jst_hook *h, int route, JST_UNPAREN(JST_LADD_P))
{
    int known = data && size && link_input_known(type);
    struct load_step s = {.image = known ? data : NULL,
                          .size = size,
                          .handle = (uint64_t)(uintptr_t)state,
                          .link_input = 1,
                          .input = type,
                          .name = name};
    JST_STEP_RUN(ladd_fn, JST_LADD_A, s, (void)0);
}
JST_WRAP(cuLinkAddData, JST_LADD_P, JST_LADD_A, h_ladd)
JST_WRAP(cuLinkAddData_v2, JST_LADD_P, JST_LADD_A, h_ladd)

#define JST_LFILE_P                                                                                \
    (CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,            \
     CUjit_option *options, void **optionValues)
#define JST_LFILE_A (state, type, path, numOptions, options, optionValues)
typedef CUresult(*lfile_fn) JST_LFILE_P;
static CUresult h_lfile_add(struct jst_hook *h, int route, JST_UNPAREN(JST_LFILE_P))
{
    struct load_step s = {.path = path && link_input_known(type) ? path : NULL,
                          .handle = (uint64_t)(uintptr_t)state,
                          .link_input = 1,
                          .input = type};
    JST_STEP_RUN(lfile_fn, JST_LFILE_A, s, (void)0);
}
JST_WRAP(cuLinkAddFile, JST_LFILE_P, JST_LFILE_A, h_lfile_add)
JST_WRAP(cuLinkAddFile_v2, JST_LFILE_P, JST_LFILE_A, h_lfile_add)

typedef CUresult (*lcomplete_fn)(CUlinkState, void **, size_t *);
static CUresult h_lcomplete(struct jst_hook *h, int route, CUlinkState state, void **cubinOut,
                            size_t *sizeOut)
{
    struct load_step s = {.handle = (uint64_t)(uintptr_t)state};
    struct jst_load ld;
    JST_HOOK_RUN(lcomplete_fn, (state, cubinOut, sizeOut), step_begin(&ev, &ld, h, route, &s));
    jst_inflight_close(&ev);
    uint8_t buf[512];
    struct jst_rec rec;
    jst_event_record(&ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)state);
    if (r == CUDA_SUCCESS && sizeOut)
        jst_rec_u64(&rec, JST_F_CUBIN_SIZE, (uint64_t)*sizeOut);
    jst_emit(&rec, 1);
    jst_event_end(&ev);
    return r;
}
JST_WRAP(cuLinkComplete, (CUlinkState state, void **cubinOut, size_t *sizeOut),
         (state, cubinOut, sizeOut), h_lcomplete)
