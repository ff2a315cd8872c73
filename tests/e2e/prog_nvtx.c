/*
 * End-to-end program for NVTX ranges (header-only nvtx3 from the toolkit,
 * linked with -ldl and -lcuda): a "warmup" range around a SASS load and its
 * first launch, then "query1" around a PTX-only load (the simulated driver's
 * slow JIT), then a domain range named by a registered string ("query2") with
 * a nested push, a start/end range, and "query1" again. Prints one line per
 * step and the values NVTX returned for push and pop, which must be the same
 * with and without the preload.
 *
 * Usage: prog_nvtx FIXTURES_DIR EXIT_CODE [fork|many|threads]
 * fork: first fork a child that marks "child" around its own cuInit (while
 * the parent has a range open) and exits; the parent waits for it.
 * many: first push "outer", then 3000 push/pop pairs and a push "lost", all
 * before the first driver call (more than the preload holds before its
 * trace file exists); "lost" and "outer" are popped at the end.
 * threads: at the end, four threads each mark "worker" around a nested
 * "step", at the same time (a barrier holds them until all have pushed).
 */
#include <pthread.h>
#include <sys/wait.h>
#include <nvtx3/nvToolsExt.h>

#include "e2e_common.h"

static void load_and_launch(const struct e2e_api *a, const char *dir, const char *img,
                            CUdeviceptr buf)
{
    e2e_flow_module(a, dir, img, buf);
}

static pthread_barrier_t workers_in;

static void *worker(void *arg)
{
    (void)arg;
    nvtxRangePushA("worker");
    pthread_barrier_wait(&workers_in);
    nvtxRangePushA("step");
    nvtxRangePop();
    nvtxRangePop();
    return NULL;
}

static void run_workers(void)
{
    pthread_t t[4];
    pthread_barrier_init(&workers_in, NULL, 4);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&workers_in);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FIXTURES_DIR EXIT_CODE\n", argv[0]);
        return 2;
    }
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    const char *dir = argv[1];
    CUdeviceptr buf = 0;

    if (argc > 3 && strcmp(argv[3], "many") == 0) {
        nvtxRangePushA("outer");
        for (int i = 0; i < 3000; i++) {
            nvtxRangePushA("spin");
            nvtxRangePop();
        }
        nvtxRangePushA("lost");
    }
    int lv = nvtxRangePushA("warmup");
    if (argc > 3 && strcmp(argv[3], "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            nvtxRangePushA("child");
            cuInit(0);
            nvtxRangePop();
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    printf("push warmup: %d\n", lv);
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return atoi(argv[2]);
    load_and_launch(&a, dir, "sm90.fatbin", buf);
    printf("pop: %d\n", nvtxRangePop());

    printf("push query1: %d\n", nvtxRangePushA("query1"));
    load_and_launch(&a, dir, "ptx75.fatbin", buf);
    printf("pop: %d\n", nvtxRangePop());

    nvtxDomainHandle_t dom = nvtxDomainCreateA("jitstall-test");
    nvtxStringHandle_t q2 = nvtxDomainRegisterStringA(dom, "query2");
    /* The same domain and string again give the same handles (with a tool
     * attached; without one every handle is NULL). */
    printf("same handles again: %d\n", nvtxDomainCreateA("jitstall-test") == dom &&
                                           nvtxDomainRegisterStringA(dom, "query2") == q2);
    nvtxEventAttributes_t ea;
    memset(&ea, 0, sizeof ea);
    ea.version = NVTX_VERSION;
    ea.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ea.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    ea.message.registered = q2;
    printf("domain push query2: %d\n", nvtxDomainRangePushEx(dom, &ea));
    printf("push inner: %d\n", nvtxRangePushA("inner"));
    load_and_launch(&a, dir, "sm90.fatbin", buf);
    printf("pop: %d\n", nvtxRangePop());
    printf("domain pop: %d\n", nvtxDomainRangePop(dom));

    nvtxRangeId_t id = nvtxRangeStartA("background");
    nvtxRangeEnd(id);

    printf("push query1: %d\n", nvtxRangePushA("query1"));
    printf("pop: %d\n", nvtxRangePop());
    if (argc > 3 && strcmp(argv[3], "many") == 0) {
        nvtxRangePop(); /* lost */
        nvtxRangePop(); /* outer */
    }
    printf("pop without push: %d\n", nvtxRangePop());
    if (argc > 3 && strcmp(argv[3], "threads") == 0)
        run_workers();
    e2e_step(&a, "cuMemFree", a.cuMemFree(buf));
    return atoi(argv[2]);
}
