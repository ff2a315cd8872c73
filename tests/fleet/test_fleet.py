#!/usr/bin/env python3
"""Fleet exports checked with the real components users run.

- `jitstall export --format prometheus` output passes `promtool check metrics`
  (Debian's prometheus package), and a real prometheus-node-exporter on the
  loopback, reading the directory with its textfile collector, serves the
  jitstall metrics on /metrics;
- the preload's own file (JITSTALL_PROM_DIR) passes promtool and is replaced,
  not piled up, by the next process of the same program and labels;
- `jitstall export --format otlp` parses as an ExportTraceServiceRequest with
  the OpenTelemetry protobuf definitions (PyPI's opentelemetry-proto, in the
  venv tests/deps.sh makes), and its spans match the report.

usage: test_fleet.py CASE   (ctest runs each; --list names them)
env: JST_CLI, JST_PRELOAD, JST_SIMDIR, JST_PROG_DIRECT, JST_FIXTURES, JST_OTLP_PYTHON
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from clitest import case, expect, main as run_cases  # noqa: E402  (the shared harness)


class TmpEnv:
    """A case's scratch directory, removed afterwards."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="jst-fleet-")

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def need_tool(name):
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
    # A missing tool is a failure, not a skip: tests/run.sh installs it.
    expect(path, f"{name} not found (apt-get install prometheus prometheus-node-exporter)")
    return path


def traced_run(tmp, name, images, labels="service=db,version=1.2", extra=None):
    """prog_direct on the simulated driver under the preload; returns the trace dir."""
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CUDA_") and not k.startswith("JITSTALL_")}
    env.update(LD_LIBRARY_PATH=os.environ["JST_SIMDIR"], LD_PRELOAD=os.environ["JST_PRELOAD"],
               JITSTALL_DIR=d, CUDA_CACHE_PATH=os.path.join(tmp, "cache"),
               JITSTALL_SIM_JIT_US_PER_KB="2000", JITSTALL_LABELS=labels)
    env.update(extra or {})
    r = subprocess.run([os.environ["JST_PROG_DIRECT"], os.environ["JST_FIXTURES"], "0", "module",
                        *images], capture_output=True, env=env, timeout=60)
    expect(r.returncode == 0, f"prog_direct exited {r.returncode}: {r.stderr!r}")
    return d


def cli(*args):
    r = subprocess.run([os.environ["JST_CLI"], *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def samples(text):
    """{(name, frozenset(labels)): value} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        expect(m, f"not a sample line: {line!r}")
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def get(s, name, **want):
    hits = [v for (n, labels), v in s.items() if n == name and
            all((k, str(val)) in labels for k, val in want.items())]
    expect(len(hits) == 1, f"{name} {want}: {len(hits)} samples")
    return hits[0]


@case
def test_prometheus_export(env):
    tmp = env.tmp
    promtool = need_tool("promtool")
    cold = traced_run(tmp, "cold", ["ptx75.fatbin", "sm90.fatbin"])
    rc, out, err = cli("export", "--format", "prometheus", cold)
    expect(rc == 0, f"export: exit {rc}: {err}")
    r = subprocess.run([promtool, "check", "metrics"], input=out, capture_output=True, text=True)
    expect(r.returncode == 0, f"promtool check metrics: {r.stdout}{r.stderr}\n{out}")
    s = samples(out)
    lab = dict(program="prog_direct", service="db", version="1.2", gpu_arch="sm_90")
    rc, rep, _ = cli("report", "--json", cold)
    p = json.loads(rep)["processes"][0]
    expect(abs(get(s, "jitstall_jit_seconds", **lab) - p["jit_ns"] / 1e9) < 1e-6, "JIT seconds = report")
    expect(abs(get(s, "jitstall_time_to_first_kernel_seconds", **lab) - p["ttfk_ns"] / 1e9) < 1e-6,
           "ttfk = report")
    expect(get(s, "jitstall_loads", verdict="ptx_jit", **lab) == 1, "one ptx_jit load")
    expect(get(s, "jitstall_loads", verdict="sass", **lab) == 1, "one sass load")
    expect(get(s, "jitstall_jit_cache_outcomes", outcome="miss_stored", **lab) == 1, "cold: stored")
    # Every verdict and every cache outcome has its sample, 0 included, so no
    # series comes and goes between runs (get() fails on a missing one).
    for v in ("sass", "ptx_jit", "forced_jit", "no_compatible", "jit_disabled", "damaged"):
        get(s, "jitstall_loads", verdict=v, **lab)
    for o in ("hit", "miss_stored", "miss_not_stored", "unknown"):
        get(s, "jitstall_jit_cache_outcomes", outcome=o, **lab)
    expect(not any("pid" in dict(l) for (_, l) in s), "no pid label (bounded series)")
    # Two processes of one program and label set give one series set: the
    # slowest time to first kernel, summed JIT.
    warm = traced_run(tmp, "cold", ["ptx75.fatbin", "sm90.fatbin"])
    rc, out, err = cli("export", "--format", "prometheus", warm)
    s = samples(out)
    expect(get(s, "jitstall_processes", **lab) == 2, "two processes folded into one set")
    expect(get(s, "jitstall_jit_cache_outcomes", outcome="hit", **lab) == 1, "warm: hit")


@case
def test_node_exporter_textfile(env):
    tmp = env.tmp
    exporter = need_tool("prometheus-node-exporter")
    d = traced_run(tmp, "t", ["ptx75.fatbin"])
    textdir = os.path.join(tmp, "textfile")
    os.makedirs(textdir)
    rc, _, err = cli("export", "--format", "prometheus", "-o",
                     os.path.join(textdir, "jitstall.prom"), d)
    expect(rc == 0, f"export -o: {err}")
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    proc = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}",
                             "--collector.disable-defaults", "--collector.textfile",
                             f"--collector.textfile.directory={textdir}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        body = None
        for _ in range(100):  # up to 10 s for it to listen
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
        expect(body is not None, f"node_exporter did not answer: {proc.stderr.read().decode() if proc.poll() is not None else ''}")
        expect('node_textfile_scrape_error 0' in body, "the textfile collector read the file without error")
        s = samples("\n".join(l for l in body.splitlines() if l.startswith("jitstall_")))
        expect(get(s, "jitstall_loads", verdict="ptx_jit", program="prog_direct", service="db") == 1,
               "node_exporter serves the jitstall metrics")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@case
def test_preload_prom_dir(env):
    tmp = env.tmp
    promtool = need_tool("promtool")
    promdir = os.path.join(tmp, "prom")
    extra = {"JITSTALL_PROM_DIR": promdir}
    d = traced_run(tmp, "a", ["ptx75.fatbin", "sm90.fatbin"], extra=extra)
    files = sorted(os.listdir(promdir)) if os.path.isdir(promdir) else []
    expect(len(files) == 1 and files[0].endswith(".prom"), f"one .prom file per process: {files}")
    text = open(os.path.join(promdir, files[0])).read()
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    expect(r.returncode == 0, f"promtool check metrics: {r.stdout}{r.stderr}\n{text}")
    s = samples(text)
    rc, rep, _ = cli("report", "--json", d)
    p = json.loads(rep)["processes"][0]
    lab = dict(program="prog_direct", service="db")
    expect(abs(get(s, "jitstall_jit_seconds", **lab) - p["jit_ns"] / 1e9) < 1e-6,
           f"preload JIT seconds {get(s, 'jitstall_jit_seconds', **lab)} = report {p['jit_ns'] / 1e9}")
    expect(abs(get(s, "jitstall_time_to_first_kernel_seconds", **lab) - p["ttfk_ns"] / 1e9) < 1e-6,
           "preload ttfk = report")
    expect(get(s, "jitstall_loads", verdict="ptx_jit", **lab) == 1, "ptx_jit load counted")
    # jitstall's own cost: the same figure as the trace's END record.
    rc, dump, _ = cli("dump", "--json", *[os.path.join(d, f) for f in os.listdir(d)])
    end = [json.loads(l) for l in dump.splitlines() if '"type":"end"' in l]
    expect(len(end) == 1 and end[0].get("self_ns", 0) > 0, f"END has self_ns: {end}")
    expect(any(n == "jitstall_self_seconds" for (n, _) in s), "jitstall_self_seconds is written")
    expect(abs(get(s, "jitstall_self_seconds", **lab) - end[0]["self_ns"] / 1e9) < 1e-6,
           "own cost = the trace's self_ns")
    # The next process of the same program and labels replaces the file.
    traced_run(tmp, "b", ["sm90.fatbin"], extra=extra)
    after = sorted(os.listdir(promdir))
    expect(after == files, f"files pile up: {after}")
    s = samples(open(os.path.join(promdir, files[0])).read())
    expect(get(s, "jitstall_loads", verdict="ptx_jit", **lab) == 0, "replaced by the newer run")
    # Another label set is another file; no temp files are left behind.
    traced_run(tmp, "c", ["sm90.fatbin"], labels="service=other", extra=extra)
    after = sorted(os.listdir(promdir))
    expect(len(after) == 2 and all(f.endswith(".prom") for f in after), f"{after}")


@case
def test_otlp_export(env):
    tmp = env.tmp
    py = os.environ.get("JST_OTLP_PYTHON")
    expect(py and os.path.exists(py), "no Python with opentelemetry-proto (tests/deps.sh makes .pyvenv)")
    d = traced_run(tmp, "t", ["ptx75.fatbin", "sm90.fatbin"])
    traced_run(tmp, "t", ["sm90.fatbin"])
    out = os.path.join(tmp, "spans.json")
    rc, _, err = cli("export", "--format", "otlp", "-o", out, d)
    expect(rc == 0, f"export otlp: {err}")
    rc, rep, _ = cli("report", "--json", d)
    report = json.loads(rep)
    checker = r'''
import base64, json, sys
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
doc = json.load(open(sys.argv[1]))
# OTLP/JSON writes ids as hex; protobuf's own JSON mapping wants base64.
for rs in doc["resourceSpans"]:
    for ss in rs["scopeSpans"]:
        for sp in ss["spans"]:
            for k in ("traceId", "spanId", "parentSpanId"):
                if k in sp:
                    sp[k] = base64.b64encode(bytes.fromhex(sp[k])).decode()
req = ParseDict(doc, ExportTraceServiceRequest())
out = []
for rs in req.resource_spans:
    res = {a.key: a.value for a in rs.resource.attributes}
    spans = [s for ss in rs.scope_spans for s in ss.spans]
    out.append({
        "pid": res["process.pid"].int_value,
        "service": res["service.name"].string_value,
        "trace_ids": sorted({s.trace_id.hex() for s in spans}),
        "id_lens": sorted({(len(s.trace_id), len(s.span_id)) for s in spans}),
        "roots": [s.name for s in spans if not s.parent_span_id],
        "parents_ok": all(not s.parent_span_id or s.parent_span_id in {x.span_id for x in spans} for s in spans),
        "spans": [{"name": s.name, "start": s.start_time_unix_nano, "end": s.end_time_unix_nano,
                   "attrs": {a.key: (a.value.string_value or a.value.int_value) for a in s.attributes}}
                  for s in spans],
    })
print(json.dumps(out))
'''
    r = subprocess.run([py, "-c", checker, out], capture_output=True, text=True)
    expect(r.returncode == 0, f"not a valid ExportTraceServiceRequest: {r.stderr}")
    got = json.loads(r.stdout)
    expect(len(got) == 2, f"one resource (trace) per process: {len(got)}")
    expect(len({g["trace_ids"][0] for g in got}) == 2 and all(len(g["trace_ids"]) == 1 for g in got),
           "one trace id per process, distinct")
    for g in got:
        expect(g["id_lens"] == [[16, 8]], f"ids of 16 and 8 bytes: {g['id_lens']}")
        expect(g["roots"] == ["prog_direct cold start"] and g["parents_ok"], g["roots"])
        expect(g["service"] == "db", g["service"])
        rp = [p for p in report["processes"] if p["pid"] == g["pid"]][0]
        loads = [s for s in g["spans"] if "jitstall.verdict" in s["attrs"]]
        rmods = rp["modules"]
        expect(sorted(s["attrs"]["jitstall.verdict"] for s in loads) == sorted(m["verdict"] for m in rmods),
               f"load spans match the report's modules: {[s['attrs'] for s in loads]} vs {rmods}")
        for s in loads:
            expect(s["end"] >= s["start"] > 0, "times")
            if s["attrs"]["jitstall.verdict"] == "ptx_jit":
                m = [m for m in rmods if m["verdict"] == "ptx_jit"][0]
                expect(s["attrs"].get("jitstall.cache") == m["cache"], f"cache {s['attrs']} vs {m}")
                expect(s["end"] - s["start"] == m["dur_ns"], f"duration {s['end'] - s['start']} vs {m['dur_ns']}")
                expect("-gencode" in s["attrs"].get("jitstall.fix", ""), s["attrs"])
        expect(any(s["name"].startswith("first launch ") for s in g["spans"]), "first launch span")
        expect(any(s["name"] == "cuInit" for s in g["spans"]), "cuInit span")


# A collector on the loopback: decodes each POST with the OpenTelemetry
# protobuf definitions (400 when it cannot), writes what it got to OUT as
# JSON lines, and answers STATUS. Prints its port once listening.
RECEIVER = r'''
import base64, json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
out, status = sys.argv[1], int(sys.argv[2])
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        rec = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        try:
            doc = json.loads(body)
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for sp in ss["spans"]:
                        for k in ("traceId", "spanId", "parentSpanId"):
                            if k in sp:
                                sp[k] = base64.b64encode(bytes.fromhex(sp[k])).decode()
            req = ParseDict(doc, ExportTraceServiceRequest())
            rec["resources"] = [{"attrs": {a.key: a.value.string_value or a.value.int_value
                                           for a in rs.resource.attributes},
                                 "spans": [sp.name for ss in rs.scope_spans for sp in ss.spans]}
                                for rs in req.resource_spans]
            code = status
        except Exception as e:
            rec["error"] = repr(e)
            code = 400
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        msg = b"{}" if code == 200 else b'{"message": "bad spans"}'
        self.send_header("Content-Length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)
    def log_message(self, *a):
        pass
srv = HTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
'''


def receiver(py, out, status):
    p = subprocess.Popen([py, "-c", RECEIVER, out, str(status)], stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline())
    return p, port


def cli_env(*args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    e.update(env or {})
    r = subprocess.run([os.environ["JST_CLI"], *args], capture_output=True, text=True, timeout=120,
                       env=e)
    return r.returncode, r.stdout, r.stderr


@case
def test_otlp_push(env):
    # OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), ..._HEADERS, OTEL_SERVICE_NAME
    # and OTEL_RESOURCE_ATTRIBUTES honoured; the spans decode as an
    # ExportTraceServiceRequest on the collector's side; -o keeps a file too.
    tmp = env.tmp
    py = os.environ.get("JST_OTLP_PYTHON")
    expect(py and os.path.exists(py), "no Python with opentelemetry-proto (tests/deps.sh makes .pyvenv)")
    d = traced_run(tmp, "t", ["ptx75.fatbin", "sm90.fatbin"])
    got = os.path.join(tmp, "got.jsonl")
    p, port = receiver(py, got, 200)
    try:
        base = f"http://127.0.0.1:{port}"
        rc, out, err = cli_env("export", "--format", "otlp", d, env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": base + "/",
            "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20tok,x-tenant = a",
            "OTEL_SERVICE_NAME": "ingest",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,team=gpu%2Cml"})
        expect(rc == 0 and out == "", f"push: {rc} {out!r} {err!r}")
        expect(err == f"jitstall export: sent 1 process to {base}/v1/traces\n", err)
        recs = [json.loads(l) for l in open(got)]
        expect(len(recs) == 1 and "error" not in recs[0], recs)
        r = recs[0]
        expect(r["path"] == "/v1/traces", r["path"])
        expect(r["headers"].get("content-type") == "application/json", r["headers"])
        expect(r["headers"].get("authorization") == "Bearer tok" and r["headers"].get("x-tenant") == "a",
               r["headers"])
        (res,) = r["resources"]
        a = res["attrs"]
        expect(a["service.name"] == "ingest" and a["deployment.environment"] == "prod"
               and a["team"] == "gpu,ml", a)
        expect("prog_direct cold start" in res["spans"] and "cuInit" in res["spans"], res["spans"])
        # TRACES_ENDPOINT is used as it is; --endpoint wins over both; -o keeps a file.
        f = os.path.join(tmp, "spans.json")
        rc, _, err = cli_env("export", "--format", "otlp", "-o", f, d, env={
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": base + "/custom/path"})
        expect(rc == 0 and os.path.getsize(f) > 0, err)
        rc, _, err = cli_env("export", "--endpoint", base + "/base", d)
        expect(rc == 0, err)
        paths = [json.loads(l)["path"] for l in open(got)]
        expect(paths == ["/v1/traces", "/custom/path", "/base/v1/traces"], paths)
    finally:
        p.kill()
        p.wait()
    # A collector that refuses: exit 2, its answer said, the -o file kept.
    p, port = receiver(py, got, 503)
    try:
        f = os.path.join(tmp, "kept.json")
        rc, out, err = cli_env("export", "--endpoint", f"http://127.0.0.1:{port}", "-o", f, d)
        expect(rc == 2, f"refused: exit {rc}")
        expect(f"\njitstall export: the collector at http://127.0.0.1:{port}/v1/traces "
               "refused the spans: HTTP 503: {\"message\": \"bad spans\"}; the spans are kept in "
               "the -o file\n" in err, err)
        expect(json.load(open(f))["resourceSpans"], "the file is kept")
    finally:
        p.kill()
        p.wait()
    # Nothing listening: exit 2, the file kept.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    s.close()
    f = os.path.join(tmp, "kept2.json")
    rc, out, err = cli_env("export", "--format", "otlp", "-o", f, d,
                           env={"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{dead}"})
    expect(rc == 2 and "cannot reach the collector at" in err, f"{rc} {err!r}")
    expect(json.load(open(f))["resourceSpans"], "the file is kept")
    # --endpoint with another format is a usage error; a gRPC protocol is refused.
    rc, _, err = cli_env("export", "--format", "prometheus", "--endpoint", "http://127.0.0.1:1", d)
    expect(rc == 2 and "--format otlp only" in err, err)
    rc, _, err = cli_env("export", "--endpoint", "http://127.0.0.1:1", d,
                         env={"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    expect(rc == 2 and "gRPC" in err, err)


if __name__ == "__main__":
    sys.exit(run_cases(sys.argv, TmpEnv))
