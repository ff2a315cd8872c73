# A server's start under the preload (sourced by tests/gpu/run.sh; issue 32):
# tests/gpu/server_torch.py warms torch.compile(dynamic=False) up on two
# shapes, writes a ready file (JITSTALL_READY=file:...), then serves a third
# shape, which recompiles after ready. While it runs, `jitstall status` and
# the live metrics file (JITSTALL_PROM_DIR, JITSTALL_LIVE_MS=500) are polled
# and each change printed as "== " lines. Then: the trace's READY record, the
# report's late compile, and `check --max-late-compiles 0` failing (exit 1).
# Inductor compiles in the process itself (TORCHINDUCTOR_COMPILE_THREADS=1),
# so its ptxas children are this process's; fresh Triton and Inductor caches
# make every shape compile.

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  d="$W/t/server"
  rm -rf "$d"
  mkdir -p "$d/trace" "$d/prom"
  if "$J" status --help >/dev/null 2>&1; then st=1; else
    st=0
    echo "== server: this jitstall has no 'status' command: its poll is skipped"
  fi
  env TRITON_CACHE_DIR="$d/triton" TORCHINDUCTOR_CACHE_DIR="$d/inductor" \
    TORCHINDUCTOR_COMPILE_THREADS=1 CUDA_CACHE_PATH="$d/cuda" JITSTALL_DIR="$d/trace" \
    JITSTALL_PROM_DIR="$d/prom" JITSTALL_LIVE_MS=500 JITSTALL_READY="file:$d/ready" \
    LD_PRELOAD="$PRELOAD" python3 "$G/server_torch.py" "$d/ready" 3 >"$d/out" 2>"$d/err" &
  spid=$!
  python3 - "$d" "$spid" "$J" "$st" <<'PY' >"$d/poll.txt" 2>&1
import glob, os, subprocess, sys, time
d, pid, j, st = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
t0 = time.time()
last_live, last_st = {}, None

def alive():
    try:
        os.kill(pid, 0)
        return not open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    except OSError:
        return False

def brief(text):
    v = {}
    comp, secs = [], []
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, val = line.rsplit(" ", 1)
        base = name.split("{")[0]
        if base == "jitstall_compiling" and float(val) == 1:
            comp.append(name.split('compiler="')[1].split('"')[0])
        elif base == "jitstall_compile_seconds":
            who = name.split('compiler="')[1].split('"')[0]
            secs.append(who + ":%.2f" % float(val))
        elif base in ("jitstall_ready", "jitstall_exited", "jitstall_late_compiles_total",
                      "jitstall_late_compile_seconds_total", "jitstall_time_to_ready_seconds"):
            v[base[9:]] = val
    return (f"ready={v.get('ready')} compiling={','.join(comp) or '-'} compile_s={' '.join(secs) or '-'} "
            f"late={v.get('late_compiles_total')} late_s={v.get('late_compile_seconds_total')} "
            f"exited={v.get('exited')}")

while True:
    running = alive()
    for f in glob.glob(d + "/prom/*.prom"):
        try:
            b = brief(open(f).read())
        except OSError:
            continue
        if b != last_live.get(f):
            print(f"live t={time.time() - t0:5.1f}s {os.path.basename(f)} {b}", flush=True)
            last_live[f] = b
    if st:
        r = subprocess.run([j, "status", d + "/trace"], capture_output=True, text=True)
        s = (r.stdout + r.stderr).strip().replace("\n", " | ") + f" [rc {r.returncode}]"
        if s != last_st:
            print(f"status t={time.time() - t0:5.1f}s {s}", flush=True)
            last_st = s
    if not running:
        break
    time.sleep(0.25)
PY
  wait "$spid"
  rc=$?
  sed 's/^/== server /' "$d/poll.txt"
  if [ $rc -eq 0 ] && grep -q '^served' "$d/out"; then ok "server: ran under the preload and served"
  else fail "server: exit $rc: $(tail -3 "$d/err" | tr '\n' ' ')"; fi
  "$J" dump --json "$d"/trace/*.jst >"$d/dump.jsonl" 2>"$d/dump.err" || fail "server: dump failed"
  if grep '"type":"ready"' "$d/dump.jsonl" | grep -q "\"ready_spec\":\"file:$d/ready\""; then
    ok "server: the trace has the READY record"
  else fail "server: no READY record with the file spec"; fi
  # The poll interleaves live-file lines with status lines: judge the live ones.
  # Each program has its own file (the compilers the server runs have theirs): judge the server's.
  grep '^live .* jitstall_python3' "$d/poll.txt" >"$d/live.txt"
  if grep -q 'ready=0' "$d/live.txt" && grep -q 'ready=1 .*exited=0' "$d/live.txt" &&
    tail -1 "$d/live.txt" | grep -q 'exited=1'; then
    ok "server: the live file went from not ready to ready while running, then said exited"
  else fail "server: the live file did not show ready 0, then 1, then exited"; fi
  if grep -q 'live .*compiling=[a-z]' "$d/poll.txt"; then ok "server: the live file showed a compile in flight"
  else echo "== server: note: no poll caught a compile in flight"; fi
  if tail -1 "$d/live.txt" | grep -Eq 'late=[1-9]'; then ok "server: the live file counted the late compile"
  else fail "server: the last live file counts no late compile"; fi
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1 || fail "server: report failed"
  grep -iE 'time to (first kernel|ready)' "$d/report.txt" | sed 's/^/== server report: /'
  if grep -qi 'late' "$d/report.txt"; then
    sed -n '/[Ll]ate/,/^$/p' "$d/report.txt" | head -30 | sed 's/^/== server report: /'
    ok "server: the report shows the late compile"
  else fail "server: the report has no late compile (needs the analyzer's late-compile work)"; fi
  "$J" check --max-late-compiles 0 "$d/trace" >"$d/check.txt" 2>&1
  crc=$?
  sed 's/^/== server check: /' "$d/check.txt" | head -10
  if [ $crc -eq 1 ]; then ok "server: check --max-late-compiles 0 fails (exit 1)"
  else fail "server: check --max-late-compiles 0 exited $crc, expected 1"; fi
else
  echo "skip: python3 has no torch with CUDA here"
fi
