# The report's first screen, as a user sees it, for two cold programs;
# sourced by tests/gpu/run.sh (JITSTALL_GPU_PARTS=screens runs only this
# part), with its helpers (ok, fail, $J, $W, $G, $P, $PRELOAD).
#  - the PTX-only cudart program (gpu_cudart_ptx), cold JIT cache;
#  - a cold Triton kernel (tests/gpu/fw_first_call.py triton), fresh caches.
# Prints the first 25 lines of each text report with "== screen NAME: ", and
# checks that the first line answers the question: it names the time to
# first kernel and, for the cudart program, the driver's JIT and its fix.
SC="$W/screens"
rm -rf "$SC"
mkdir -p "$SC/cudart" "$SC/triton"
env CUDA_CACHE_PATH="$SC/cudart/cache" JITSTALL_DIR="$SC/cudart" LD_PRELOAD="$PRELOAD" \
  "$P/gpu_cudart_ptx" >"$SC/cudart.out" 2>&1
NO_COLOR=1 "$J" report "$SC/cudart" >"$SC/cudart.txt" 2>&1
head -25 "$SC/cudart.txt" | sed 's/^/== screen cudart: /'
first=$(head -1 "$SC/cudart.txt")
case $first in
*"first kernel after"*"compiling"*"fix:"*) ok "screens: the cudart report opens with the answer" ;;
*) fail "screens: the cudart report's first line: $first" ;;
esac
if python3 -c "import triton" 2>/dev/null; then
  env TRITON_CACHE_DIR="$SC/triton/cache" CUDA_CACHE_PATH="$SC/triton/nv" JITSTALL_DIR="$SC/triton" \
    LD_PRELOAD="$PRELOAD" python3 "$G/fw_first_call.py" triton >"$SC/triton.out" 2>&1
  NO_COLOR=1 "$J" report "$SC/triton" >"$SC/triton.txt" 2>&1
  head -25 "$SC/triton.txt" | sed 's/^/== screen triton: /'
  first=$(head -1 "$SC/triton.txt")
  case $first in
  *"first kernel after"*) ok "screens: the Triton report opens with the answer" ;;
  *) fail "screens: the Triton report's first line: $first" ;;
  esac
else
  echo "== screen triton: skipped, no triton"
fi
