/*
 * The command line in the PROCESS record, without the secrets people put on
 * it. A trace is shared (attached to a bug, read by `jitstall report`), so
 * the values of arguments that name a credential are replaced by "***":
 *   --password=X, --token X, --api-key=X, --key=X, --auth user:X ... (option
 *   names with cred_words or cred_parts),
 *   "Authorization: Bearer X", "Cookie: X" (headers, as curl -H takes them),
 *   DB_PASSWORD=X, GITHUB_TOKEN=X (variables given as arguments),
 *   scheme://user:X@host (the password of a URL) and scheme://X@host (a
 *   token as the user name), and
 *   tokens with the prefix of a well-known API key anywhere (sk-X, ghp_X,
 *   xoxb-X, AKIAX ...), whose prefix is kept.
 * `-p` is not redacted: it means "port" or "parallel" to too many programs.
 * JITSTALL_ARGV=0 records no argument at all. The rules are in docs/FORMAT.md.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "state.h"
#include "argv.h"

#define JST_REDACTED "***"

/* Substrings of a name (option, variable or header) that make its value a
 * credential wherever they are. The tables here hold characters, not
 * pointers: pointers would be relocated by the loader in every process. */
static const char cred_words[][16] = {"password",   "passwd",      "passphrase",  "token",
                                      "secret",     "apikey",      "api-key",     "api_key",
                                      "credential", "private-key", "private_key", "authorization"};
/* Whole words of a name (between '-', '_' or its ends) that do too: as
 * substrings they would catch "--keyboard" or "--author". */
static const char cred_parts[][8] = {"key", "auth", "pw", "pwd", "cookie", "bearer"};

/* Does the name in [s, s+n) name a credential? */
static int cred_name(const char *s, size_t n)
{
    for (size_t w = 0; w < sizeof cred_words / sizeof cred_words[0]; w++) {
        size_t k = strlen(cred_words[w]);
        for (size_t i = 0; i + k <= n; i++)
            if (strncasecmp(s + i, cred_words[w], k) == 0)
                return 1;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && s[j] != '-' && s[j] != '_')
            j++;
        for (size_t w = 0; w < sizeof cred_parts / sizeof cred_parts[0]; w++)
            if (strlen(cred_parts[w]) == j - i && strncasecmp(s + i, cred_parts[w], j - i) == 0)
                return 1;
        if (j == n && j - i == 4 && strncasecmp(s + i, "pass", 4) == 0)
            return 1; /* --pass, --db-pass; not --pass-through */
        i = j + 1;
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

/* Appends a credential's value v (n bytes) redacted: "user:***" for a
 * user:password pair, "Bearer ***" for a scheme and its token, else "***". */
static size_t put_secret(char *out, size_t at, size_t cap, const char *v, size_t n)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)v[i]) || v[i] == '.' || v[i] == '_' || v[i] == '-'))
        i++;
    if (i > 0 && i + 1 < n && (v[i] == ':' || v[i] == ' '))
        at = put(out, at, cap, v, i + 1);
    return put(out, at, cap, JST_REDACTED, strlen(JST_REDACTED));
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

/* The prefixes of well-known API keys and tokens: OpenAI and Stripe (sk-,
 * sk_live_...), GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Slack
 * (xoxb-, xoxp-, ...), AWS access keys (AKIA), GitLab (glpat-), Hugging Face
 * (hf_), Google (AIza). */
static const char key_prefixes[][12] = {
    "sk-",   "sk_",   "rk_",   "ghp_",  "gho_", "ghu_", "ghs_",   "ghr_", "github_pat_", "xoxb-",
    "xoxp-", "xoxa-", "xoxs-", "xoxe-", "AKIA", "ASIA", "glpat-", "hf_",  "AIza"};
#define JST_KEY_MIN 16 /* characters after the prefix: shorter is not a key */

static int key_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* Replaces, in out[0..n), every token that starts with a known key prefix
 * (at the start or after a character that cannot be part of it) and has at
 * least JST_KEY_MIN more characters by its prefix and "***". Returns the
 * new length (never longer). */
static size_t redact_keys(char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && key_char(out[i - 1]))
            continue;
        for (size_t k = 0; k < sizeof key_prefixes / sizeof key_prefixes[0]; k++) {
            size_t pl = strlen(key_prefixes[k]);
            if (pl > n - i || memcmp(out + i, key_prefixes[k], pl) != 0)
                continue;
            size_t e = i + pl;
            while (e < n && key_char(out[e]))
                e++;
            if (e - i - pl < JST_KEY_MIN)
                continue;
            size_t r = strlen(JST_REDACTED);
            memcpy(out + i + pl, JST_REDACTED, r);
            memmove(out + i + pl + r, out + e, n - e);
            n -= e - (i + pl + r);
            i += pl + r - 1;
            break;
        }
    }
    return n;
}

/* "Name: value" with a credential's name (an HTTP header as curl -H takes
 * it: Authorization, Cookie, X-Api-Key, ...): the length of "Name: ", else 0. */
static size_t header_name(const char *a, size_t n)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)a[i]) || a[i] == '-' || a[i] == '_'))
        i++;
    if (i == 0 || i + 1 >= n || a[i] != ':' || !cred_name(a, i))
        return 0;
    i++;
    while (i < n && a[i] == ' ')
        i++;
    return i;
}

/* NAME=value with a credential's name (DB_PASSWORD=..., GITHUB_TOKEN=...):
 * the length of "NAME=", else 0. The shell's PWD and OLDPWD are paths. */
static size_t env_name(const char *a, size_t n)
{
    size_t i = 0;
    if (n == 0 || !(isalpha((unsigned char)a[0]) || a[0] == '_'))
        return 0;
    while (i < n && (isalnum((unsigned char)a[i]) || a[i] == '_'))
        i++;
    if (i >= n || a[i] != '=' || !cred_name(a, i))
        return 0;
    if ((i == 3 && strncmp(a, "PWD", 3) == 0) || (i == 6 && strncmp(a, "OLDPWD", 6) == 0))
        return 0;
    return i + 1;
}

static size_t arg_redact(const char *a, size_t n, int *next_secret, char *out, size_t cap)
{
    if (*next_secret) { /* the value after "--password" */
        *next_secret = 0;
        return put_secret(out, 0, cap, a, n);
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
            return put_secret(out, o, cap, eq + 1, n - name_end - 1);
        }
    }
    size_t h = header_name(a, n);
    if (!h)
        h = env_name(a, n);
    if (h) {
        size_t o = put(out, 0, cap, a, h);
        return put_secret(out, o, cap, a + h, n - h);
    }
    return redact_urls(a, n, out, cap);
}

size_t jst_arg_redact(const char *a, size_t n, int *next_secret, char *out, size_t cap)
{
    return redact_keys(out, arg_redact(a, n, next_secret, out, cap));
}

int jst_argv_wanted(void)
{
    const char *v = getenv("JITSTALL_ARGV");
    return !(v && strcmp(v, "0") == 0);
}
