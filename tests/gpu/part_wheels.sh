# The CI gate of `jitstall scan` on the GPU libraries people install, as on
# NVIDIA's own (issue 33): `scan --arch sm_90,sm_100 --fail-on no_compatible`
# over torch's and JAX's wheels (and the nvidia-* wheels beside them) must
# pass: a library's variants for other GPUs, PTX or not, are no failure. A
# no_compatible left is printed with its file, so a real gap shows as one.
# Sourced by tests/gpu/run.sh with its helpers (ok, fail, $J, $W).
# Prints what it saw with "== wheels: ".

wh_say() { sed 's/^/== wheels: /'; }

wh_scan() { # NAME DIR...
  local name=$1; shift
  local d="$W/t/wh_$name" rc=0 t0=$SECONDS
  mkdir -p "$d"
  "$J" scan --arch sm_90,sm_100 --fail-on no_compatible "$@" >"$d/scan.txt" 2>"$d/scan.err" || rc=$?
  local took=$((SECONDS - t0))
  grep -E '^summary for|^  sm_[0-9]+: ' "$d/scan.txt" | wh_say
  echo "$name: exit $rc in ${took} s over $*" | wh_say
  if [ $rc -eq 0 ]; then
    ok "wh_$name: scan --arch sm_90,sm_100 --fail-on no_compatible passes"
  else
    fail "wh_$name: scan --fail-on no_compatible exit $rc ($(head -c 300 "$d/scan.err"))"
    "$J" scan --arch sm_90,sm_100 --json "$@" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    doc = json.loads(line)
    for f in doc["files"]:
        for i in f["images"]:
            if i["verdict"] == "no_compatible":
                print("%s %s @%d [%s]: %s" % (doc["arch"], f["path"], i["offset"],
                      " ".join(e["arch"] for e in i["entries"]), i["reason"]))
' | sort | uniq | head -20 | wh_say
  fi
  # The listing of the GPU present stays readable: names cut to the width.
  local long
  long=$(COLUMNS=100 "$J" scan --device "$@" 2>/dev/null | awk 'length($0) > 100 && /^      /' | wc -l)
  [ "$long" -eq 0 ] && ok "wh_$name: kernel names cut to 100 columns" ||
    fail "wh_$name: $long kernel lines over 100 columns"
}

tdir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null || true)
if [ -n "$tdir" ] && [ -d "$tdir" ]; then
  extra=()
  [ -d "$(dirname "$tdir")/nvidia" ] && extra+=("$(dirname "$tdir")/nvidia")
  wh_scan torch "$tdir" "${extra[@]}"
else
  echo "skip: wheels: python3 has no torch here"
fi
jdirs=()
for m in jaxlib jax_plugins jax_cuda13_plugin jax_cuda12_plugin jax_cuda13_pjrt jax_cuda12_pjrt; do
  p=$(python3 -c "import importlib.util as u, os; s = u.find_spec('$m'); print(os.path.dirname(s.origin) if s and s.origin else (list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else ''))" 2>/dev/null || true)
  [ -n "$p" ] && [ -d "$p" ] && jdirs+=("$p")
done
if [ ${#jdirs[@]} -gt 0 ]; then
  wh_scan jax "${jdirs[@]}"
else
  echo "skip: wheels: python3 has no jax/jaxlib here"
fi
