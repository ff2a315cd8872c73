#!/usr/bin/env bash
# The framework-cache probes on hostile paths (fw_cache records, written
# before a C program's first compile record: prog_spawn's):
# - a FIFO, a device (/dev/zero) and a path under a device are not writable
#   (not_dir): no cache can be made there, and nothing is ever opened there
#   (opening a FIFO would block the program);
# - a path of 9000 bytes is recorded cut to 4096 with its full length, not
#   dropped;
# - a directory of 5000 names is counted to 1000 and says "more than".
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/bin" "$WORK/out" "$WORK/big"
for n in ptxas nvcc; do ln -s "$BIN/fake_cc" "$WORK/bin/$n"; done
mkfifo "$WORK/fifo"
python3 - "$WORK/big" <<'PY'
import os, sys
for i in range(5000):
    open(os.path.join(sys.argv[1], f"e{i}"), "w").close()
PY
long=$(python3 -c 'print("/tmp/" + "/".join(["d" * 200] * 44))')
[ ${#long} -gt 8192 ] || fail "the long path is only ${#long} bytes"
vars=(TRITON_CACHE_DIR="$WORK/fifo" CUPY_CACHE_DIR=/dev/zero NUMBA_CACHE_DIR=/dev/zero/cache
    JAX_COMPILATION_CACHE_DIR="$long" TORCHINDUCTOR_CACHE_DIR="$WORK/big")
run_plain plain "${vars[@]}" PATH="$WORK/bin:$PATH" "$BIN/prog_spawn" "$WORK/bin" "$WORK/out"
run_traced traced "${vars[@]}" PATH="$WORK/bin:$PATH" timeout 60 "$BIN/prog_spawn" "$WORK/bin" "$WORK/out"
expect_rc plain 0
same_behaviour plain traced
dump_json "$(the_trace traced)" "$WORK/t.json"
check_json "$WORK/t.json" fifo="$WORK/fifo" long="$long" <<'PY'
fw = {r["framework"]: r for r in of_type("fw_cache")}
expect(sorted(fw) == ["cupy", "inductor", "jax", "numba", "torch_extensions", "triton"], f"six records: {sorted(fw)}")
for name in ("triton", "cupy", "numba"):
    r = fw[name]
    expect(r["writable"] == 0 and r["exists"] == 0 and r.get("not_dir") == 1, f"{name}: {r}")
expect(fw["triton"]["cache_path"] == arg["fifo"], "the FIFO's path")
j = fw["jax"]
expect(j["cache_path"] == arg["long"][:4096] and j.get("cache_path_len") == len(arg["long"]), f"jax: cut path {len(j['cache_path'])}, {j.get('cache_path_len')}")
expect(j["writable"] == 0 and j["exists"] == 0, f"jax: too long to be used: {j}")
i = fw["inductor"]
expect(i["exists"] == 1 and i["entries"] == 1000 and i.get("entries_more") == 1, f"inductor: {i}")
PY
echo "ok: framework-cache probes on a FIFO, a device, a long path and a large directory"
