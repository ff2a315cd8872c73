#!/usr/bin/env bash
# examples/README.md's commands work as written without a GPU: every line of
# its sh blocks that does not end in "# needs a GPU" is run, block by block,
# from the top of the repository, against this build, on the simulated
# driver (as the README says). The lines the README leaves for a GPU are not
# run; pip and docker lines neither (they install or need a daemon), nor the
# demo (tests/test_demo.sh runs it), and nvcc
# lines only where nvcc is. /tmp/ in the commands is mapped to this test's
# own folder, removed at the end.
#   usage: tests/test_examples.sh BUILD_DIR
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/jst-test-examples.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
work=$tmp/top
mkdir -p "$work"
# A view of the checkout whose build/ is this build (the README says build/).
# examples/ is copied, not linked: its commands reach ../../build from
# inside it, which must be this view's build/, not the checkout's.
for f in "$top"/*; do
  case $(basename "$f") in
  build) ;;
  examples) cp -r "$f" "$work/" ;;
  *) ln -s "$f" "$work/" ;;
  esac
done
ln -s "$B" "$work/build"
export PATH=$PATH:/usr/local/cuda/bin
fails=0 ran=0
block=() name=""
run_block() {
  [ ${#block[@]} -gt 0 ] || return 0
  local script=$tmp/block.sh line
  printf 'set -e\ncd %q\n' "$work" >"$script"
  for line in "${block[@]}"; do
    case $line in
    *"# needs a GPU") continue ;;
    "pip "* | docker*) continue ;;
    examples/demo.sh) continue ;; # tests/test_demo.sh runs it
    nvcc* | "cmake -S examples/ctest-check"*) # CUDA code: needs nvcc
      command -v nvcc >/dev/null || { echo "note: $name: no nvcc, skipped: $line"; return 0; } ;;
    esac
    printf '%s\n' "${line//\/tmp\//$tmp/}" >>"$script"
    ran=$((ran + 1))
  done
  local out
  if ! out=$(bash "$script" 2>&1); then
    echo "FAIL: examples/README.md, $name: a command failed:"
    sed 's/^/    /' "$script"
    echo "$out" | tail -20
    fails=$((fails + 1))
  else
    echo "ok: $name"
    checks "$name" "$out"
  fi
}
# What the blocks must show, beyond exiting 0.
checks() {
  case $1 in
  *driver-ptx-only*)
    grep -q "verdict *ptx_jit" <<<"$2" || { echo "FAIL: driver-ptx-only: no JIT reported: $2"; fails=$((fails + 1)); } ;;
  *cudart-ptx-only*)
    grep -q "ptx_jit from compute_75" <<<"$2" || { echo "FAIL: cudart-ptx-only: scan: $2"; fails=$((fails + 1)); } ;;
  esac
}
inblock=0
while IFS= read -r l; do
  if [ $inblock = 0 ]; then
    case $l in
    "## "*) name=${l#\#\# } ;;
    '```sh') inblock=1 block=() ;;
    esac
  elif [ "$l" = '```' ]; then
    inblock=0
    run_block
  else
    block+=("$l")
  fi
done <"$top/examples/README.md"
[ $ran -gt 0 ] || { echo "FAIL: no command of examples/README.md was run"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo "test_examples: all passed ($ran commands)"
exit $((fails > 0))
