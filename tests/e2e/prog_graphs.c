/*
 * CUDA graph capture, as a server does at start: one graph per batch size.
 * Loads a PTX-only image (the driver JITs it: the first call's compile
 * work), captures and instantiates N_IN graphs, launches the image's kernel
 * for the first time (the end of that first call), then captures N_AFTER
 * more. Every variant is used in turn: cuStreamBeginCapture (legacy, _v2,
 * ToGraph), cuGraphInstantiate (legacy, WithFlags, WithParams). Before that,
 * the two error paths: a capture of the NULL stream and an end without a
 * begin. Prints one line per kind of call with its results, nothing that
 * varies between runs.
 *
 * Usage: prog_graphs FIXTURES_DIR EXIT_CODE ROUTE N_IN N_AFTER [PAUSE_S [HOLD_S]]
 * PAUSE_S: seconds to sleep before the captures after the first launch (so
 * that a JITSTALL_READY=after:... timer fires in between).
 * HOLD_S: then one more capture held open that long (begun, a sleep, ended),
 * for a reader of the live trace.
 * ROUTE: direct (linked symbols), dlsym (dlsym of each exact variant on
 * libcuda.so.1), procaddr (cuGetProcAddress_v2 by base name and version).
 */
#define __CUDA_API_VERSION_INTERNAL 1 /* every variant under its own name */
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct api {
    CUresult (*init)(unsigned);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*load_data)(CUmodule *, const void *);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*err_name)(CUresult, const char **);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*graph_create)(CUgraph *, unsigned);
    CUresult (*begin1)(CUstream);
    CUresult (*begin2)(CUstream, CUstreamCaptureMode);
    CUresult (*begin_tg)(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
                         CUstreamCaptureMode);
    CUresult (*end)(CUstream, CUgraph *);
    CUresult (*inst1)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
    CUresult (*inst_flags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*inst_params)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
};

#define SET(member, fn) a->member = (__typeof__(a->member))(fn)

static void resolve_direct(struct api *a)
{
    SET(init, cuInit);
    SET(retain, cuDevicePrimaryCtxRetain);
    SET(set_current, cuCtxSetCurrent);
    SET(load_data, cuModuleLoadData);
    SET(get_function, cuModuleGetFunction);
    SET(launch, cuLaunchKernel);
    SET(err_name, cuGetErrorName);
    SET(stream_create, cuStreamCreate);
    SET(graph_create, cuGraphCreate);
    SET(begin1, cuStreamBeginCapture);
    SET(begin2, cuStreamBeginCapture_v2);
    SET(begin_tg, cuStreamBeginCaptureToGraph);
    SET(end, cuStreamEndCapture);
    SET(inst1, cuGraphInstantiate);
    SET(inst_flags, cuGraphInstantiateWithFlags);
    SET(inst_params, cuGraphInstantiateWithParams);
}

static int resolve_dlsym(struct api *a)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    SET(init, dlsym(h, "cuInit"));
    SET(retain, dlsym(h, "cuDevicePrimaryCtxRetain"));
    SET(set_current, dlsym(h, "cuCtxSetCurrent"));
    SET(load_data, dlsym(h, "cuModuleLoadData"));
    SET(get_function, dlsym(h, "cuModuleGetFunction"));
    SET(launch, dlsym(h, "cuLaunchKernel"));
    SET(err_name, dlsym(h, "cuGetErrorName"));
    SET(stream_create, dlsym(h, "cuStreamCreate"));
    SET(graph_create, dlsym(h, "cuGraphCreate"));
    SET(begin1, dlsym(h, "cuStreamBeginCapture"));
    SET(begin2, dlsym(h, "cuStreamBeginCapture_v2"));
    SET(begin_tg, dlsym(h, "cuStreamBeginCaptureToGraph"));
    SET(end, dlsym(h, "cuStreamEndCapture"));
    SET(inst1, dlsym(h, "cuGraphInstantiate_v2"));
    SET(inst_flags, dlsym(h, "cuGraphInstantiateWithFlags"));
    SET(inst_params, dlsym(h, "cuGraphInstantiateWithParams"));
    return 1;
}

static int resolve_procaddr(struct api *a)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    __typeof__(&cuGetProcAddress_v2) gpa =
        h ? (__typeof__(&cuGetProcAddress_v2))dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa)
        return 0;
    void *p;
#define GPA(member, name, ver)                                                                     \
    p = NULL;                                                                                      \
    gpa(name, &p, ver, CU_GET_PROC_ADDRESS_DEFAULT, NULL);                                         \
    SET(member, p);
    GPA(init, "cuInit", 13000);
    GPA(retain, "cuDevicePrimaryCtxRetain", 13000);
    GPA(set_current, "cuCtxSetCurrent", 13000);
    GPA(load_data, "cuModuleLoadData", 13000);
    GPA(get_function, "cuModuleGetFunction", 13000);
    GPA(launch, "cuLaunchKernel", 13000);
    GPA(err_name, "cuGetErrorName", 13000);
    GPA(stream_create, "cuStreamCreate", 13000);
    GPA(graph_create, "cuGraphCreate", 13000);
    GPA(begin1, "cuStreamBeginCapture", 10000);
    GPA(begin2, "cuStreamBeginCapture", 13000);
    GPA(begin_tg, "cuStreamBeginCaptureToGraph", 13000);
    GPA(end, "cuStreamEndCapture", 13000);
    GPA(inst1, "cuGraphInstantiate", 11000);
    GPA(inst_flags, "cuGraphInstantiateWithFlags", 13000);
    GPA(inst_params, "cuGraphInstantiateWithParams", 13000);
#undef GPA
    return 1;
}

static const char *err(const struct api *a, CUresult r)
{
    const char *s = NULL;
    return a->err_name && a->err_name(r, &s) == CUDA_SUCCESS && s ? s : "UNKNOWN";
}

static void *read_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n > 0 ? calloc(1, (size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* Captures n graphs on s, variant i % 3 of each call; counts the results. */
static void capture(const struct api *a, CUstream s, int n, int *ok, int *failed)
{
    for (int i = 0; i < n; i++) {
        CUgraph g = NULL, into = NULL;
        CUgraphExec x = NULL;
        CUresult r;
        if (i % 3 == 0) {
            r = a->begin1(s);
        } else if (i % 3 == 1) {
            r = a->begin2(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
        } else {
            a->graph_create(&into, 0);
            r = a->begin_tg(s, into, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
        }
        if (r == CUDA_SUCCESS)
            r = a->end(s, &g);
        if (r == CUDA_SUCCESS) {
            if (i % 3 == 0) {
                r = a->inst1(&x, g, NULL, NULL, 0);
            } else if (i % 3 == 1) {
                r = a->inst_flags(&x, g, 0);
            } else {
                CUDA_GRAPH_INSTANTIATE_PARAMS prm = {0};
                r = a->inst_params(&x, g, &prm);
            }
        }
        *(r == CUDA_SUCCESS ? ok : failed) += 1;
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s FIXTURES EXIT ROUTE N_IN N_AFTER\n", argv[0]);
        return 2;
    }
    struct api a = {0};
    const char *route = argv[3];
    int n_in = atoi(argv[4]), n_after = atoi(argv[5]);
    if (strcmp(route, "direct") == 0)
        resolve_direct(&a);
    else if (!(strcmp(route, "dlsym") == 0 ? resolve_dlsym(&a) : resolve_procaddr(&a)))
        return 90;
    if (!a.init || !a.begin1 || !a.begin2 || !a.begin_tg || !a.end || !a.inst1 || !a.inst_flags ||
        !a.inst_params || !a.stream_create || !a.graph_create || !a.launch) {
        printf("an entry point is missing\n");
        return 91;
    }
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream s;
    CUgraph g = NULL;
    printf("cuInit: %s\n", err(&a, a.init(0)));
    printf("retain: %s\n", err(&a, a.retain(&ctx, 0)));
    printf("set current: %s\n", err(&a, a.set_current(ctx)));
    void *img = read_file(argv[1], "ptx75.fatbin");
    printf("load ptx75.fatbin: %s\n", img ? err(&a, a.load_data(&mod, img)) : "unreadable");
    printf("stream: %s\n", err(&a, a.stream_create(&s, 0)));
    printf("capture of the NULL stream: %s\n",
           err(&a, a.begin2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL)));
    printf("end without a begin: %s\n", err(&a, a.end(s, &g)));
    int ok = 0, failed = 0;
    capture(&a, s, n_in, &ok, &failed);
    printf("captured in the first call: %d ok, %d failed\n", ok, failed);
    printf("get function: %s\n", err(&a, a.get_function(&fn, mod, "add_one")));
    printf("first launch: %s\n", err(&a, a.launch(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL)));
    if (argc > 6) {
        double pause = atof(argv[6]);
        struct timespec ts = {(time_t)pause, (long)((pause - (double)(time_t)pause) * 1e9)};
        nanosleep(&ts, NULL);
    }
    ok = failed = 0;
    capture(&a, s, n_after, &ok, &failed);
    printf("captured after: %d ok, %d failed\n", ok, failed);
    if (argc > 7) {
        double hold = atof(argv[7]);
        struct timespec ts = {(time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9)};
        CUgraph held = NULL;
        CUresult r = a.begin1(s);
        nanosleep(&ts, NULL);
        if (r == CUDA_SUCCESS)
            r = a.end(s, &held);
        printf("held capture: %s\n", err(&a, r));
    }
    free(img);
    return atoi(argv[2]);
}
