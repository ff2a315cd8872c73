/*
 * `jitstall export --format otlp` sent to an OpenTelemetry collector: the
 * OTLP/JSON document POSTed over OTLP/HTTP, configured the way every
 * OpenTelemetry SDK is (OTEL_EXPORTER_OTLP_ENDPOINT, ..._TRACES_ENDPOINT,
 * ..._HEADERS, ..._TIMEOUT). libcurl does the HTTP; this is the CLI only,
 * never the preload.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "otlp_push.h"
#include "xalloc.h"

/* %XX decoded in place (the OTEL_* lists percent-encode their values). */
static void pct_decode(char *s)
{
    char *w = s;
    for (; *s; s++) {
        if (*s == '%' && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
            char h[3] = {s[1], s[2], 0};
            *w++ = (char)strtol(h, NULL, 16);
            s += 2;
        } else {
            *w++ = *s;
        }
    }
    *w = 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

int jst_otlp_endpoint(const char *flag, char *url, size_t n)
{
    const char *t = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    const char *base = flag ? flag : NULL;
    if (!base && t && *t) {
        snprintf(url, n, "%s", t); /* used as it is */
        return 1;
    }
    if (!base) {
        const char *e = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
        if (!e || !*e)
            return 0;
        base = e;
    }
    size_t l = strlen(base);
    while (l && base[l - 1] == '/')
        l--;
    snprintf(url, n, "%.*s/v1/traces", (int)l, base);
    return 1;
}

/* The response body is kept (the first bytes) to quote the collector. */
struct resp {
    char buf[512];
    size_t len;
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *ctx)
{
    struct resp *r = ctx;
    size_t n = size * nmemb;
    size_t room = sizeof r->buf - 1 - r->len;
    size_t take = n < room ? n : room;
    memcpy(r->buf + r->len, p, take);
    r->len += take;
    r->buf[r->len] = 0;
    return n;
}

/* OTEL_EXPORTER_OTLP_HEADERS: "k1=v1,k2=v2", values percent-encoded. */
static struct curl_slist *otel_headers(struct curl_slist *h, char *err, size_t errlen)
{
    const char *env = getenv("OTEL_EXPORTER_OTLP_HEADERS");
    if (!env || !*env)
        return h;
    char *copy = jst_xstrdup(env), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(err, errlen, "OTEL_EXPORTER_OTLP_HEADERS: '%s' is not KEY=VALUE", trim(item));
            free(copy);
            curl_slist_free_all(h);
            return NULL;
        }
        *eq = 0;
        char *k = trim(item), *v = trim(eq + 1);
        pct_decode(k);
        pct_decode(v);
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", k, v);
        h = curl_slist_append(h, line);
    }
    free(copy);
    return h;
}

int jst_otlp_push(const char *url, const char *body, size_t len, char *err, size_t errlen)
{
    const char *proto = getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
    if (!proto || !*proto)
        proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL");
    if (proto && !strcmp(proto, "grpc")) {
        snprintf(err, errlen,
                 "OTLP over gRPC is not supported: jitstall sends OTLP/HTTP (JSON); point it at "
                 "the collector's HTTP port (4318) and unset OTEL_EXPORTER_OTLP_PROTOCOL");
        return -1;
    }
    long timeout_ms = 10000;
    const char *to = getenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT");
    if (!to || !*to)
        to = getenv("OTEL_EXPORTER_OTLP_TIMEOUT");
    if (to && *to) {
        char *end;
        long v = strtol(to, &end, 10);
        if (!*end && v > 0)
            timeout_ms = v;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        snprintf(err, errlen, "cannot start libcurl");
        return -1;
    }
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = otel_headers(h, err, errlen);
    if (!c || !h) {
        if (!h && !err[0])
            snprintf(err, errlen, "out of memory");
        if (c)
            curl_easy_cleanup(c);
        curl_global_cleanup();
        return -1;
    }
    struct resp r = {{0}, 0};
    char cerr[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "jitstall/" JITSTALL_VERSION);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    int ret = 0;
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "cannot reach the collector at %s: %s", url,
                 cerr[0] ? cerr : curl_easy_strerror(rc));
        ret = -1;
    } else if (status < 200 || status > 299) {
        /* the collector's reason, on one line */
        for (char *p = r.buf; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        snprintf(err, errlen, "the collector at %s refused the spans: HTTP %ld%s%s", url, status,
                 r.buf[0] ? ": " : "", trim(r.buf));
        ret = -1;
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    curl_global_cleanup();
    return ret;
}
