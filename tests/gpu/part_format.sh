# Sourced by tests/gpu/run.sh (bash, set -uo pipefail, no -e): trace format
# version 2 and the trace descriptor on the real driver.
# - a cudart program still traces: a complete version 2 trace, blocks counted;
# - two bytes changed in the middle of that real trace: every record of the
#   other blocks is recovered (figures printed);
# - the trace descriptor is kept high (in the top quarter of the limit, or of
#   the descriptor table when that is smaller: 48 and up); a program that
#   puts its own file on that number keeps its file to itself, and the load
#   after it is traced.
fmt_dir="$W/format"
mkdir -p "$fmt_dir"
fmt_ok=1
nvcc -I"$G" -g -gencode "arch=compute_${cc},code=sm_${cc}" "$G/gpu_cudart.cu" -o "$P/fmt_cudart" \
  >"$fmt_dir/build.log" 2>&1 || { fail "format: building the cudart program: $(tail -3 "$fmt_dir/build.log")"; fmt_ok=0; }
nvcc "$G/fmt_fd.c" -o "$P/fmt_fd" -lcuda >>"$fmt_dir/build.log" 2>&1 ||
  { fail "format: building fmt_fd: $(tail -3 "$fmt_dir/build.log")"; fmt_ok=0; }

if [ "$fmt_ok" = 1 ]; then
  # 1. cudart still traces, as a complete version 2 trace.
  c=$(fresh "$C/fmt_cudart")
  run_case fmt_cudart "$c" -- "$P/fmt_cudart"
  t=$(ls "$W"/t/fmt_cudart/trace/*.jst 2>/dev/null | head -1)
  shape=0
  if [ -z "$t" ]; then
    fail "format: the cudart program left no trace"
  else
    facts=$(python3 - "$t" "$W/t/fmt_cudart/dump.jsonl" <<'PY' 2>&1
import json, sys
b = open(sys.argv[1], "rb").read()
ver = int.from_bytes(b[8:10], "little")
flags = int.from_bytes(b[20:24], "little")
at, blocks, plain = 32, 0, 0
while at + 28 <= len(b) and b[at:at + 4] == b"JBLK":
    plain += b[at + 16] == 0
    at += 28 + int.from_bytes(b[at + 8:at + 12], "little")
    blocks += 1
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
loads = [r for r in recs if r.get("call_id") == "cuLibraryLoadData"]
print(f"{ver} {flags} {blocks} {plain} {at == len(b)} {len(recs)} {len(loads)} {len(b)}")
PY
)
    read -r v fl nb np whole nrec nload size <<<"$facts"
    echo "== format: real cudart trace: version $v, $size bytes, $nb blocks ($np plain), $nrec records, $nload cuLibraryLoadData"
    shape=0
    if [[ "${size:-}" =~ ^[0-9]+$ && "${nload:-}" =~ ^[0-9]+$ ]] && [ "${v:-}" = 2 ] &&
       [ "${fl:-}" = 2 ] && [ "${whole:-}" = True ] && [ "$nload" -ge 1 ]; then
      ok "format: cudart traces as version 2, blocks end to end, loads present"
      shape=1
    else
      fail "format: unexpected trace shape: $facts"
    fi
  fi
  if [ -n "$t" ] && [ "$shape" = 1 ]; then
    # 2. Two bytes changed in the middle: records of the other blocks recovered.
    python3 - "$t" "$fmt_dir/hurt.jst" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x01
b[len(b) // 2 + 1] ^= 0x80
open(sys.argv[2], "wb").write(bytes(b))
PY
    "$J" dump --json "$fmt_dir/hurt.jst" >"$fmt_dir/hurt.jsonl" 2>"$fmt_dir/hurt.err"
    rc=$?
    got=$(grep -c . "$fmt_dir/hurt.jsonl")
    # What was lost must be one contiguous run of records (one block); the
    # rest must be exactly the records of the undamaged trace.
    run=$(python3 - "$W/t/fmt_cudart/dump.jsonl" "$fmt_dir/hurt.jsonl" <<'PY' 2>&1
import sys
a = [l for l in open(sys.argv[1]) if l.strip()]
b = [l for l in open(sys.argv[2]) if l.strip()]
i = 0
while i < len(b) and a[i] == b[i]:
    i += 1
lost = len(a) - len(b)
print("contiguous" if lost > 0 and a[:i] + a[i + lost:] == b else "broken")
PY
)
    echo "== format: 2 bytes changed at byte $((size / 2)) of the real trace: $got of $nrec records recovered ($run), dump exit $rc; $(head -1 "$fmt_dir/hurt.err")"
    if [ "$rc" = 0 ] && [ "$run" = contiguous ] && grep -q "block .* at byte" "$fmt_dir/hurt.err"; then
      ok "format: damage in a real trace loses only its block, and dump says where"
    else
      fail "format: damaged real trace: $got of $nrec records, exit $rc: $(cat "$fmt_dir/hurt.err")"
    fi
  fi

  # 3. The trace descriptor: high, and never written once the program took it.
  c=$(fresh "$C/fmt_fd")
  d="$fmt_dir/fd"
  mkdir -p "$d/trace"
  CUDA_CACHE_PATH="$c" JITSTALL_DIR="$d/trace" JITSTALL_DEBUG=1 LD_PRELOAD="$PRELOAD" \
    "$P/fmt_fd" "$P/heavy_sass.fatbin" "$d/own" >"$d/out" 2>"$d/err"
  rc=$?
  tfd=$(sed -n 's/^fmt_fd: trace descriptor \(-\?[0-9]*\)$/\1/p' "$d/err")
  lim=$(ulimit -n)
  echo "== format: trace descriptor $tfd (soft limit $lim); program exit $rc"
  if [ "$rc" = 0 ] && [ "$(cat "$d/own" 2>/dev/null)" = own ] && [ "${tfd:--1}" -ge 48 ]; then
    ok "format: the trace descriptor is high ($tfd) and the program's file on it stayed its own"
  else
    fail "format: descriptor $tfd, exit $rc, own file: $(od -c "$d/own" 2>/dev/null | head -2)"
  fi
  "$J" dump --json "$d"/trace/*.jst >"$d/dump.jsonl" 2>"$d/dump.err"
  # Call records only: each load also has a begin record written before it.
  nl=$(grep '"type":"call"' "$d/dump.jsonl" | grep -c '"call_id":"cuModuleLoadData"')
  nn=$(grep -c 'file descriptor' "$d/dump.jsonl")
  ne=$(grep -c 'file descriptor' "$d/err")
  if [ "$nl" = 2 ] && [ "$nn" = 1 ] && [ "$ne" = 1 ]; then
    ok "format: both loads traced after the descriptor was taken, one note, one debug line"
  else
    fail "format: loads $nl (want 2), notes $nn (want 1), debug lines $ne (want 1)"
  fi
fi
