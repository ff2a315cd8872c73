/*
 * The command line in the PROCESS record, without the secrets people put on
 * it. A trace is shared (attached to a bug, read by `jitstall report`), so
 * the values of arguments that name a credential are replaced by "***":
 *   --password=X, --token X, --api-key=X ... (option names in cred_words),
 *   scheme://user:X@host (the password of a URL) and scheme://X@host (a
 *   token as the user name).
 * `-p` is not redacted: it means "port" or "parallel" to too many programs.
 * JITSTALL_ARGV=0 records no argument at all. The rules are in docs/FORMAT.md.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "state.h"
#include "argv.h"

#define JST_REDACTED "***"

/* Substrings of an option name that make its value a credential. */
static const char *const cred_words[] = {"password",   "passwd",      "passphrase", "token",
                                         "secret",     "apikey",      "api-key",    "api_key",
                                         "credential", "private-key", "private_key"};

/* Does the option name in [s, s+n) (no dashes) name a credential? */
static int cred_name(const char *s, size_t n)
{
    if (n == 4 && strncasecmp(s, "pass", 4) == 0)
        return 1;
    for (size_t w = 0; w < sizeof cred_words / sizeof cred_words[0]; w++) {
        size_t k = strlen(cred_words[w]);
        for (size_t i = 0; i + k <= n; i++)
            if (strncasecmp(s + i, cred_words[w], k) == 0)
                return 1;
    }
    return 0;
}

/* Appends src[0..n) to out (room for cap bytes), cutting at cap. */
static size_t put(char *out, size_t at, size_t cap, const char *src, size_t n)
{
    if (at >= cap)
        return at;
    if (n > cap - at)
        n = cap - at;
    memcpy(out + at, src, n);
    return at + n;
}

/* Copies arg with the userinfo secret of every URL in it replaced. */
static size_t redact_urls(const char *a, size_t n, char *out, size_t cap)
{
    size_t o = 0, i = 0;
    while (i < n) {
        const char *sep = memmem(a + i, n - i, "://", 3);
        if (!sep)
            break;
        size_t host = (size_t)(sep - a) + 3, stop = host;
        while (stop < n && a[stop] != '/' && a[stop] != ' ')
            stop++;
        /* The userinfo ends at the last '@' of the authority: a password
         * may hold an '@' of its own. */
        const char *at = memrchr(a + host, '@', stop - host);
        if (!at) { /* no userinfo */
            o = put(out, o, cap, a + i, host - i);
            i = host;
            continue;
        }
        size_t end = (size_t)(at - a);
        const char *colon = memchr(a + host, ':', end - host);
        size_t keep = colon ? (size_t)(colon - a) + 1 : host; /* "user:" stays */
        o = put(out, o, cap, a + i, keep - i);
        o = put(out, o, cap, JST_REDACTED, strlen(JST_REDACTED));
        i = end; /* from the '@' on */
    }
    return put(out, o, cap, a + i, n - i);
}

size_t jst_arg_redact(const char *a, size_t n, int *next_secret, char *out, size_t cap)
{
    if (*next_secret) { /* the value after "--password" */
        *next_secret = 0;
        return put(out, 0, cap, JST_REDACTED, strlen(JST_REDACTED));
    }
    if (n >= 2 && a[0] == '-' && (a[1] != '-' || n > 2)) {
        size_t d = a[1] == '-' ? 2 : 1;
        const char *eq = memchr(a, '=', n);
        size_t name_end = eq ? (size_t)(eq - a) : n;
        if (cred_name(a + d, name_end - d)) {
            if (!eq) {
                *next_secret = 1;
                return put(out, 0, cap, a, n);
            }
            size_t o = put(out, 0, cap, a, name_end + 1);
            return put(out, o, cap, JST_REDACTED, strlen(JST_REDACTED));
        }
    }
    return redact_urls(a, n, out, cap);
}

int jst_argv_wanted(void)
{
    const char *v = getenv("JITSTALL_ARGV");
    return !(v && strcmp(v, "0") == 0);
}
