/*
 * Sending OTLP/JSON spans to an OpenTelemetry collector over OTLP/HTTP
 * (implementation: analyzer/otlp_push.c, with libcurl).
 */
#ifndef JST_ANALYZER_OTLP_PUSH_H
#define JST_ANALYZER_OTLP_PUSH_H

#include <stddef.h>

/* The traces URL: flag (--endpoint, a base URL) + "/v1/traces"; else
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is; else OTEL_EXPORTER_OTLP_ENDPOINT
 * + "/v1/traces". 1 with the URL in url, 0 when none is configured. */
int jst_otlp_endpoint(const char *flag, char *url, size_t n);

/* POSTs body (len bytes of OTLP/JSON) to url with OTEL_EXPORTER_OTLP_HEADERS
 * and OTEL_EXPORTER_OTLP_TIMEOUT. 0 on a 2xx answer; -1 with one line in err
 * when the collector cannot be reached or refuses. */
int jst_otlp_push(const char *url, const char *body, size_t len, char *err, size_t errlen);

#endif
