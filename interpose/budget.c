/*
 * The in-process JIT budget alert. JITSTALL_BUDGET_MS=N: at exit, when the
 * loads that JIT-compiled took more than N ms in total, one line on stderr
 * names the worst one. JITSTALL_FAIL_EXIT_CODE=K (opt-in, only with a budget):
 * a process that would exit 0 over budget exits K instead; a non-zero status
 * is never changed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ext.h"
#include "state.h"

#define JST_BUDGET_LABEL_MAX 256

JST_START_DATA static atomic_int budget_installed;
static atomic_int budget_armed; /* a valid JITSTALL_BUDGET_MS was set */
static uint64_t budget_ns;      /* the budget */
static uint64_t budget_ms;      /* as given, for the message */
static int budget_fail_code;    /* 0: never change the exit status */

/* Totals; the lock is taken once per JIT load, never on the launch path. */
static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t budget_total_ns;
static uint64_t budget_worst_ns;
static char budget_worst_label[JST_BUDGET_LABEL_MAX];

/* One line to stderr with write(2) (jst_say: only while descriptor 2 is
 * the one the process started with); no stdio state is touched. */
static void budget_say(const char *line)
{
    jst_say(line, strlen(line));
}

/* What was wrong with the variables, read by the constructor in every
 * process but said only by one that traces (jst_budget_warn), once: a shell
 * or a build tool on the way to the CUDA program stays silent. */
static const char *budget_warnings[2];
static atomic_int budget_warned;

static void budget_warn_later(const char *line)
{
    for (size_t i = 0; i < 2; i++)
        if (!budget_warnings[i]) {
            budget_warnings[i] = line;
            return;
        }
}

void jst_budget_warn(void)
{
    if (atomic_exchange(&budget_warned, 1))
        return;
    for (size_t i = 0; i < 2; i++)
        if (budget_warnings[i])
            budget_say(budget_warnings[i]);
}

/* Parses a whole non-negative decimal number; -1 when it is not one. */
static int64_t parse_count(const char *v)
{
    if (!v || !*v || v[0] == '-' || v[0] == '+')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end != '\0' || n > (unsigned long long)INT64_MAX / 1000000)
        return -1;
    return (int64_t)n;
}

/* A forked child starts its own account: it did not JIT what its parent did. */
static void budget_atfork_child(void)
{
    pthread_mutex_init(&budget_lock, NULL);
    budget_total_ns = 0;
    budget_worst_ns = 0;
    budget_worst_label[0] = '\0';
}

/* Runs at exit(status). Registered early, so it runs after handlers the
 * program registered later (the trace's end record among them). When it
 * replaces the status, handlers registered before it (by libraries set up
 * before the preload) and destructors do not run: that is the price of the
 * opt-in exit code, and why it is opt-in. */
static void budget_at_exit(int status, void *arg)
{
    (void)arg;
    if (!budget_armed)
        return;
    pthread_mutex_lock(&budget_lock);
    uint64_t total = budget_total_ns, worst = budget_worst_ns;
    char label[JST_BUDGET_LABEL_MAX];
    memcpy(label, budget_worst_label, sizeof label);
    pthread_mutex_unlock(&budget_lock);
    if (total <= budget_ns)
        return;
    char line[JST_BUDGET_LABEL_MAX + 160];
    snprintf(line, sizeof line,
             "jitstall: %.1f ms spent in PTX JIT (budget %llu ms); worst: %s (%.1f ms)\n",
             (double)total / 1e6, (unsigned long long)budget_ms, label[0] ? label : "(unnamed)",
             (double)worst / 1e6);
    budget_say(line);
    if (budget_fail_code != 0 && (status & 0xff) == 0) { /* what the parent would see */
        fflush(NULL);
        _exit(budget_fail_code);
    }
}

JST_START_RODATA static const char name_budget[] = "JITSTALL_BUDGET_MS";

/* The common case (no budget asked for) decided in the start-up pages; the
 * rest only when JITSTALL_BUDGET_MS is set. */
static void budget_arm(const char *b);

JST_IDLE_TEXT void jst_budget_install(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&budget_installed, &expected, 1))
        return;
    const char *b = secure_getenv(name_budget);
    if (b)
        budget_arm(b);
}

static void budget_arm(const char *b)
{
    int64_t ms = parse_count(b);
    if (ms < 0) {
        budget_warn_later(
            "jitstall: JITSTALL_BUDGET_MS is not a number of milliseconds; no budget\n");
        return;
    }
    budget_ms = (uint64_t)ms;
    budget_ns = (uint64_t)ms * 1000000ull;
    const char *k = secure_getenv("JITSTALL_FAIL_EXIT_CODE");
    if (k) {
        int64_t code = parse_count(k);
        if (code >= 1 && code <= 255)
            budget_fail_code = (int)code;
        else
            budget_warn_later(
                "jitstall: JITSTALL_FAIL_EXIT_CODE must be 1-255; exit status unchanged\n");
    }
    pthread_atfork(NULL, NULL, budget_atfork_child);
    if (on_exit(budget_at_exit, NULL) != 0) {
        budget_warn_later("jitstall: could not arm the JIT budget check\n");
        return;
    }
    atomic_store(&budget_armed, 1);
}

void jst_budget_note_jit(const char *label, uint64_t jit_ns)
{
    if (!budget_armed)
        return;
    pthread_mutex_lock(&budget_lock);
    budget_total_ns += jit_ns;
    if (jit_ns > budget_worst_ns || !budget_worst_label[0]) {
        budget_worst_ns = jit_ns;
        snprintf(budget_worst_label, sizeof budget_worst_label, "%s",
                 label && *label ? label : "(unnamed)");
    }
    pthread_mutex_unlock(&budget_lock);
}

/* Registered before the program's own constructors and main, so that the
 * handler runs late at exit and sees the status exit() was given. */
__attribute__((constructor(101))) static void budget_ctor(void)
{
    jst_budget_install();
}
