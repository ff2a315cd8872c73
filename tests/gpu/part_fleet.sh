# Sourced by tests/gpu/run.sh (the fleet exports): a cold PTX-only start on the real
# driver with JITSTALL_PROM_DIR and JITSTALL_LABELS, then the Prometheus and
# OTLP exports of its trace. The files are left in $W/fleet for promtool and
# the OpenTelemetry protobuf check (tests/fleet/test_fleet.py does both on the
# simulated driver; where promtool is on PATH it runs here too).
F="$W/fleet"
rm -rf "$F"; mkdir -p "$F/prom" "$F/trace"
fc=$(fresh "$C/fleet")
if env CUDA_CACHE_PATH="$fc" JITSTALL_DIR="$F/trace" JITSTALL_PROM_DIR="$F/prom" \
     JITSTALL_LABELS=service=querydb,version=1.4.2 LD_PRELOAD="$PRELOAD" \
     "$P/gpu_driver" "$P/heavy_ptx75.ptx" >"$F/out" 2>&1; then
  ok "fleet: traced run with JITSTALL_PROM_DIR"
else
  fail "fleet: the program failed under the preload: $(tail -3 "$F/out")"
fi
"$J" export --format prometheus -o "$F/export.prom" "$F/trace" 2>"$F/err" || fail "fleet: export prometheus: $(cat "$F/err")"
"$J" export --format otlp -o "$F/otlp.json" "$F/trace" 2>"$F/err" || fail "fleet: export otlp: $(cat "$F/err")"
"$J" report --json "$F/trace" >"$F/report.json" 2>/dev/null
cp "$F"/prom/*.prom "$F/preload.prom" 2>/dev/null || fail "fleet: the preload wrote no .prom file"
if command -v promtool >/dev/null; then
  for f in "$F/preload.prom" "$F/export.prom"; do
    promtool check metrics <"$f" && ok "fleet: promtool accepts $(basename "$f")" || fail "fleet: promtool rejects $f"
  done
fi
python3 - "$F" <<'PY' && ok "fleet: metrics and spans agree with the report" || fail "fleet: metrics or spans disagree with the report"
import json, re, sys
d = sys.argv[1]
rep = json.load(open(f"{d}/report.json"))["processes"][0]
def val(text, name, extra=""):
    m = re.search(r'^%s\{([^}]*)\} (\S+)$' % name, text, re.M)
    return (m.group(1), float(m.group(2))) if m else (None, None)
ok = True
for f in ("preload.prom", "export.prom"):
    t = open(f"{d}/{f}").read()
    labels, jit = val(t, "jitstall_jit_seconds")
    _, ttfk = val(t, "jitstall_time_to_first_kernel_seconds")
    print(f"== fleet {f}: jit {jit} s, ttfk {ttfk} s; labels {labels}")
    ok &= jit is not None and abs(jit - rep["jit_ns"] / 1e9) < 1e-6
    ok &= 'service="querydb"' in (labels or "") and 'gpu_arch="sm_' in (labels or "")
doc = json.load(open(f"{d}/otlp.json"))
spans = [s for rs in doc["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
loads = [s for s in spans if any(a["key"] == "jitstall.verdict" for a in s.get("attributes", []))]
jit = [s for s in loads if any(a["key"] == "jitstall.verdict" and a["value"]["stringValue"] == "ptx_jit" for a in s["attributes"])]
m = [m for m in rep["modules"] if m["verdict"] == "ptx_jit"]
dur = int(jit[0]["endTimeUnixNano"]) - int(jit[0]["startTimeUnixNano"]) if jit else -1
print(f"== fleet otlp: {len(spans)} spans, {len(loads)} load spans; JIT span {dur / 1e6:.1f} ms, report {m[0]['dur_ns'] / 1e6 if m else -1:.1f} ms")
ok &= bool(jit) and bool(m) and dur == m[0]["dur_ns"]
sys.exit(0 if ok else 1)
PY
