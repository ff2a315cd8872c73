#!/bin/sh
# End-to-end test of `jitstall scan` on the committed nvcc fixtures: exact text
# output, the stable --json keys and verdicts, exit codes, directory walks with
# a symlink loop, and a damaged image.
#   usage: tests/scan/test_scan.sh [path/to/jitstall]   (default: build/jitstall)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
J=${1:-$root/build/jitstall}
case $J in /*) ;; *) J=$(pwd)/$J ;; esac # the test runs from the fixtures directory
if [ ! -x "$J" ]; then
    echo "test_scan: no jitstall binary at $J" >&2
    exit 2
fi
FX=$root/tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# 1. Exact text output (paths relative to the fixtures directory).
cd "$FX"
"$J" scan --arch sm_90 sm90.fatbin ptx75.fatbin two_fatbins.o kernels.cu >"$tmp/out" 2>"$tmp/err" ||
    fail "text scan exited $?"
cat >"$tmp/want" <<'WANT'
sm90.fatbin
  1 image runs as SASS (sm_90)
ptx75.fatbin
  image @0x0 [compute_75]: ptx_jit from compute_75 (PTX compute_75 only; GPU is sm_90)
    3 kernels would JIT from compute_75 (1612 bytes of PTX):
      add_one
      fill(int*, int)  [_Z4fillPii]
      void jst::scale<float>(float*, float)  [_ZN3jst5scaleIfEEvPT_S1_]
    fix: add -gencode arch=compute_90,code=sm_90 when building ptx75.fatbin
two_fatbins.o
  image @0x28b8 [compute_75]: ptx_jit from compute_75 (PTX compute_75 only; GPU is sm_90)
    1 kernel would JIT from compute_75 (372 bytes of PTX):
      second_kernel
    fix: add -gencode arch=compute_90,code=sm_90 when building two_fatbins.o
  1 image runs as SASS (sm_90)
kernels.cu
  no CUDA code
summary for sm_90: 4 files read, 3 with CUDA code, 4 images: 2 sass, 2 ptx_jit, 0 no_compatible, 0 damaged, 0 empty; 4 kernels would JIT, 0 cannot run (JIT of 1 KiB of PTX, about 2 ms on a cold cache)
WANT
diff -u "$tmp/want" "$tmp/out" >&2 || fail "text output differs"
[ -s "$tmp/err" ] && fail "unexpected stderr: $(cat "$tmp/err")"

# 2. --json over the whole fixtures directory: keys and verdicts per file.
"$J" scan --arch sm_90 --json "$FX" >"$tmp/json" || fail "json scan exited $?"
python3 - "$tmp/json" "$FX" <<'PY' || fail "json checks"
import json, sys
doc = json.load(open(sys.argv[1]))
fx = sys.argv[2]
assert doc["arch"] == "sm_90", doc["arch"]
files = {f["path"][len(fx) + 1:]: f for f in doc["files"]}
want = {  # file -> [(verdict, sass_arch, jit_from)] per image
    "sm90.fatbin": [("sass", "sm_90", None)],
    "sm90.cubin": [("sass", "sm_90", None)],
    "sm90a.fatbin": [("sass", "sm_90a", None)],
    "sm90a.cubin": [("sass", "sm_90a", None)],
    "ptx75.fatbin": [("ptx_jit", None, "compute_75")],
    "k75.ptx": [("ptx_jit", None, "compute_75")],
    "sm80_ptx80.fatbin": [("ptx_jit", None, "compute_80")],
    "multi.fatbin": [("ptx_jit", None, "compute_90")],
    "sm100f.fatbin": [("no_compatible", None, None)],
    "lto90.fatbin": [("no_compatible", None, None)],
    "two_fatbins.o": [("sass", "sm_90", None), ("ptx_jit", None, "compute_75")],
    "hostonly.o": [("empty", None, None)],
    "other_gpus.o": [("sass", "sm_90", None), ("other_gpus", None, None)],
}
for m in ("default", "speed", "size", "none", "all_default", "all_speed"):
    want["z_%s.fatbin" % m] = [("ptx_jit", None, "compute_80")]
assert set(files) == set(want), sorted(set(files) ^ set(want))
for name, imgs in want.items():
    got = files[name]["images"]
    assert [(i["verdict"], i["sass_arch"], i["jit_from"]) for i in got] == imgs, (name, got)
    for i in got:
        for k in ("verdict", "sass_arch", "jit_from", "kernels", "entries"):
            assert k in i, (name, k)
        for e in i["entries"]:
            assert set(("kind", "arch", "compressed")) <= set(e), e
            assert e["kind"] in ("ptx", "cubin", "ltoir") and e["compressed"] in ("zstd", "lz4", "none")
        if i["verdict"] in ("ptx_jit", "no_compatible") and name != "lto90.fatbin":
            assert "add_one" in i["kernels"] or i["kernels"] == ["second_kernel"], (name, i["kernels"])
            if name == "k75.ptx":  # a PTX file: compiled ahead of time, as report says
                assert i["fix"].startswith("compile k75.ptx ahead of time") and "ptxas -arch=sm_90" in i["fix"], i["fix"]
            else:
                assert "code=sm_90" in i["fix"], i["fix"]
def comp(name):
    return [(e["kind"], e["compressed"]) for e in files[name]["images"][0]["entries"]]
assert comp("z_speed.fatbin") == [("cubin", "none"), ("ptx", "lz4")]
assert comp("z_all_speed.fatbin") == [("cubin", "lz4"), ("ptx", "lz4")]
assert comp("z_size.fatbin") == [("cubin", "zstd"), ("ptx", "zstd")]
assert comp("z_none.fatbin") == [("cubin", "none"), ("ptx", "none")]
assert comp("lto90.fatbin") == [("ltoir", "zstd")]
assert files["sm90.fatbin"]["images"][0]["kernels"] == ["_ZN3jst5scaleIfEEvPT_S1_", "_Z4fillPii", "add_one"]
assert files["sm100f.fatbin"]["images"][0]["entries"][0]["arch"] == "sm_100f"
s = doc["summary"]
assert s["images"] == 21 and s["sass"] == 6 and s["ptx_jit"] == 11 and s["no_compatible"] == 2, s
assert s["other_gpus"] == 1 and s["ptx_too_new"] == 0, s
assert s["empty"] == 1, s
PY

# 3. Other architectures.
"$J" scan --arch sm_103 --json sm100f.fatbin | python3 -c '
import json, sys; i = json.load(sys.stdin)["files"][0]["images"][0]
assert (i["verdict"], i["sass_arch"]) == ("sass", "sm_100f"), i' || fail "sm_100f on sm_103"
"$J" scan --arch 8.9 --json multi.fatbin | python3 -c '
import json, sys; i = json.load(sys.stdin)["files"][0]["images"][0]
assert (i["verdict"], i["sass_arch"]) == ("sass", "sm_86"), i' || fail "multi on 8.9"
"$J" scan --arch sm_100 --json sm90a.fatbin | python3 -c '
import json, sys; i = json.load(sys.stdin)["files"][0]["images"][0]
assert i["verdict"] == "no_compatible" and len(i["kernels"]) == 3, i' || fail "sm_90a on sm_100"

# 4. Exit codes and messages.
rc=0; "$J" scan sm90.fatbin >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "missing --arch: exit $rc"
grep -q -- "--arch sm_XY is required" "$tmp/err" || fail "missing --arch message"
rc=0; "$J" scan --arch sm_90 >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "no path: exit $rc"
rc=0; "$J" scan --arch sm_9x sm90.fatbin >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "bad arch: exit $rc"
rc=0; "$J" scan --arch sm_90 "$tmp/nope" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "unreadable only path: exit $rc"
grep -q "jitstall scan: cannot stat $tmp/nope" "$tmp/err" || fail "unreadable message"
rc=0; "$J" scan --arch sm_90 "$tmp/nope" sm90.fatbin >"$tmp/out" 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "a missing path among readable ones: exit $rc"

# 5. A tree with a symlink loop, a second name for a file, and a damaged image.
mkdir -p "$tmp/tree/sub"
cp ptx75.fatbin "$tmp/tree/sub/a.fatbin"
ln -s a.fatbin "$tmp/tree/sub/b.fatbin"
ln -s .. "$tmp/tree/sub/loop"
head -c 300 sm80_ptx80.fatbin >"$tmp/tree/cut.fatbin"
echo "not cuda" >"$tmp/tree/readme.txt"
"$J" scan --arch sm_90 --json "$tmp/tree" >"$tmp/json" || fail "tree scan exited $?"
python3 - "$tmp/json" "$tmp/tree" <<'PY' || fail "tree checks"
import json, sys
doc = json.load(open(sys.argv[1]))
paths = [f["path"] for f in doc["files"]]
assert paths == [sys.argv[2] + "/cut.fatbin", sys.argv[2] + "/sub/a.fatbin"], paths
cut = doc["files"][0]["images"][0]
assert cut["verdict"] == "damaged" and "size" in cut["reason"], cut
assert doc["summary"]["files"] == 3, doc["summary"]
PY

# An empty fatbin (the static CUDA runtime links one into every nvcc program)
# holds nothing to run: it is no image, and certainly not "no_compatible".
python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, 0))' >"$tmp/empty_then_ptx.fatbin"
cat ptx75.fatbin >>"$tmp/empty_then_ptx.fatbin"
"$J" scan --arch sm_90 --json "$tmp/empty_then_ptx.fatbin" | python3 -c '
import json, sys
imgs = json.load(sys.stdin)["files"][0]["images"]
assert [i["verdict"] for i in imgs] == ["ptx_jit"], imgs
' || fail "an empty fatbin before a real one is reported as an image"

# 6. An image without kernels (nvcc's default-arch image in a host-only
# program) is "empty": never ptx_jit or no_compatible, never a fix.
for a in sm_90 sm_70; do
    "$J" scan --arch $a hostonly.o >"$tmp/out" || fail "hostonly.o on $a exited $?"
    grep -q "^  image @0x[0-9a-f]* \[sm_75 compute_75\]: empty (no kernels" "$tmp/out" ||
        fail "hostonly.o on $a is not empty: $(cat "$tmp/out")"
    grep -q "fix:" "$tmp/out" && fail "hostonly.o on $a gets a fix"
    grep -q "0 no_compatible, 0 damaged, 1 empty; 0 kernels" "$tmp/out" ||
        fail "hostonly.o on $a: summary $(tail -1 "$tmp/out")"
    "$J" scan --arch $a --json hostonly.o | python3 -c '
import json, sys; d = json.load(sys.stdin); i = d["files"][0]["images"][0]
assert i["verdict"] == "empty" and i["fix"] is None and i["kernels"] == [], i
assert d["summary"]["empty"] == 1 and d["summary"]["no_compatible"] == 0, d["summary"]' ||
        fail "hostonly.o on $a: json"
done

# 7. --arch names a real architecture: a typo is a usage error, not a fix.
for a in sm_999 sm_91 sm_80a sm_90f compute_99 10.0x; do
    rc=0; "$J" scan --arch $a sm90.fatbin >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ $rc -eq 2 ] || fail "--arch $a: exit $rc"
    [ -s "$tmp/out" ] && fail "--arch $a: output on stdout"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--arch $a: not one line: $(cat "$tmp/err")"
done
grep -q "jitstall scan: --arch 'sm_999' is not a GPU architecture" "$tmp/err" ||
    "$J" scan --arch sm_999 x 2>&1 | grep -q "jitstall scan: --arch 'sm_999' is not a GPU architecture" ||
    fail "sm_999 message"
for a in sm_75 sm_90 sm_90a 9.0 compute_90 sm_100f sm_103a sm_120 sm_121a sm_110f sm_88 sm_37; do
    "$J" scan --arch $a sm90.fatbin >/dev/null 2>"$tmp/err" || fail "--arch $a refused: $(cat "$tmp/err")"
done

# 8. Strict spelling: a leading zero or a dotted form after a prefix is refused.
for a in sm_0100 sm_9.0 sm_12.1 compute_9.0 sm_1000 090; do
    rc=0; "$J" scan --arch $a sm90.fatbin >/dev/null 2>"$tmp/err" || rc=$?
    [ $rc -eq 2 ] || fail "--arch $a accepted (exit $rc)"
done
# sm_101 is Thor's old name: accepted, said, judged as 11.0.
"$J" scan --arch sm_101 --json sm100f.fatbin >"$tmp/out" 2>"$tmp/err" || fail "--arch sm_101 refused"
grep -q "sm_101 is the old name of sm_110" "$tmp/err" || fail "sm_101 not said to be sm_110"
grep -q '"arch":"sm_110"' "$tmp/out" || fail "sm_101 not judged as sm_110"
"$J" scan --arch sm_107 sm90.fatbin >/dev/null 2>&1 || fail "--arch sm_107 refused"

# 9. A fleet: --arch takes a list, one report per architecture, then one line each.
"$J" scan --arch sm_90,sm_100,sm_120 sm90.fatbin multi.fatbin >"$tmp/out" || fail "fleet exited $?"
for want in "summary for sm_90:" "summary for sm_100:" "summary for sm_120:" "per architecture:" \
    "  sm_90: JIT from PTX: 1 image, 3 kernels, about 2 ms of JIT on a cold cache; 1 runs as SASS" "  sm_100: cannot run: 1 image with no code for it; 1 image JIT from PTX (about 2 ms)" \
    "  sm_120: cannot run: 1 image"; do
    grep -qF "$want" "$tmp/out" || fail "fleet output lacks '$want': $(cat "$tmp/out")"
done
# --fail-on: exit 1 when an image meets a verdict, 0 otherwise; bad names are usage errors.
rc=0; "$J" scan --arch sm_90,sm_120 --fail-on no_compatible sm90.fatbin >/dev/null || rc=$?
[ $rc -eq 1 ] || fail "--fail-on no_compatible with sm_120: exit $rc"
rc=0; "$J" scan --arch sm_90 --fail-on no_compatible,ptx_jit sm90.fatbin >/dev/null || rc=$?
[ $rc -eq 0 ] || fail "--fail-on on a SASS image: exit $rc"
rc=0; "$J" scan --arch sm_90 --fail-on ptx_jit ptx75.fatbin >/dev/null || rc=$?
[ $rc -eq 1 ] || fail "--fail-on ptx_jit: exit $rc"
rc=0; "$J" scan --arch sm_90 --fail-on sass,bogus sm90.fatbin >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "--fail-on bogus: exit $rc"

# 10. No false alarms: an image of other GPUs' SASS, in a file with code for
# the GPU, is for other GPUs (no fix, not --fail-on no_compatible).
"$J" scan --arch sm_90 other_gpus.o >"$tmp/out" || fail "other_gpus.o exited $?"
grep -qF "1 image for other GPUs (sm_100a): not loaded on sm_90, no fix needed" "$tmp/out" ||
    fail "other_gpus.o: $(cat "$tmp/out")"
grep -q "fix:" "$tmp/out" && fail "other_gpus.o draws a fix on sm_90"
rc=0; "$J" scan --arch sm_90 --fail-on no_compatible other_gpus.o >/dev/null || rc=$?
[ $rc -eq 0 ] || fail "other_gpus.o fails --fail-on no_compatible on sm_90"
# ... but a file with nothing for the GPU cannot run.
"$J" scan --arch sm_120 --json other_gpus.o | python3 -c '
import json, sys; v = [i["verdict"] for i in json.load(sys.stdin)["files"][0]["images"]]
assert v == ["no_compatible", "no_compatible"], v' || fail "other_gpus.o on sm_120"

# 10b. The rule holds PTX or not: cuBLAS's variants [sm_120 compute_120],
# [sm_100 compute_120 sm_120] and [sm_89 sm_120f compute_120] hold nothing for
# sm_90 (their PTX is for a newer GPU); in a file with sm_90 code they are for
# other GPUs, with no fix and no --fail-on.
python3 "$here/mkfatbin.py" "$tmp/lt.fatbin" sm_90 sm_120,compute_120 sm_100,compute_120,sm_120 \
    sm_89,sm_120f,compute_120
python3 "$here/mkfatbin.py" "$tmp/only120.fatbin" sm_120,compute_120
rc=0; COLUMNS=200 "$J" scan --arch sm_90 --fail-on no_compatible "$tmp/lt.fatbin" >"$tmp/out" || rc=$?
[ $rc -eq 0 ] || fail "variants with newer PTX fail --fail-on no_compatible on sm_90: exit $rc"
grep -qF "3 images for other GPUs (sm_120 compute_120, sm_100 compute_120 sm_120, sm_89 sm_120f compute_120): not loaded on sm_90, no fix needed" "$tmp/out" ||
    fail "variants with newer PTX: $(cat "$tmp/out")"
grep -qE "fix:|cannot run on" "$tmp/out" && fail "variants with newer PTX draw a fix: $(cat "$tmp/out")"
"$J" scan --arch sm_90,sm_120 --json "$tmp/lt.fatbin" | python3 -c '
import json, sys
docs = [json.loads(l) for l in sys.stdin.read().replace("}\n{", "}\x00{").split("\x00")]
v = {d["arch"]: [i["verdict"] for i in d["files"][0]["images"]] for d in docs}
assert v["sm_90"] == ["sass", "other_gpus", "other_gpus", "other_gpus"], v
assert v["sm_120"] == ["other_gpus", "sass", "sass", "sass"], v
i = docs[0]["files"][0]["images"][1]
assert i["fix"] is None and i["reason"].startswith("built for other GPUs only"), i' ||
    fail "variants with newer PTX: json"
# ... and a file with nothing for sm_90 still cannot run, PTX or not.
rc=0; "$J" scan --arch sm_90 --fail-on no_compatible "$tmp/only120.fatbin" >"$tmp/out" || rc=$?
[ $rc -eq 1 ] || fail "a file with only sm_120 code passes --fail-on no_compatible on sm_90"
grep -qF "fix: add -gencode arch=compute_90,code=sm_90" "$tmp/out" || fail "only120: $(cat "$tmp/out")"
# The real cuBLAS, when the toolkit is installed: a CI gate on it passes on sm_90.
lt=/usr/local/cuda/lib64/libcublasLt.so.13
if [ -r "$lt" ]; then
    rc=0; "$J" scan --arch sm_90 --fail-on no_compatible "$lt" >"$tmp/out" || rc=$?
    [ $rc -eq 0 ] || fail "libcublasLt on sm_90: exit $rc"
    grep -qE "no_compatible \(|cannot run on|fix: add -gencode" "$tmp/out" &&
        fail "libcublasLt on sm_90: $(grep -E "no_compatible \(|fix:" "$tmp/out" | head -3)"
    grep -q "[1-9][0-9]* images run as SASS" "$tmp/out" || fail "libcublasLt: no SASS: $(tail -2 "$tmp/out")"
else
    echo "test_scan: $lt absent, its check skipped"
fi

# 11. --driver: PTX newer than the driver JITs is ptx_too_new (z_none's PTX is ISA 9.0).
for d in 12.4 550.54; do
    "$J" scan --arch sm_90 --driver $d --json z_none.fatbin ptx75.fatbin k75.ptx | python3 -c '
import json, sys; d = json.load(sys.stdin)
assert d["driver_cuda"] == "12.4", d.get("driver_cuda")
v = {f["path"]: (f["images"][0]["verdict"], f["images"][0].get("ptx_isa")) for f in d["files"]}
assert v["z_none.fatbin"] == ("ptx_too_new", "9.0"), v
assert v["ptx75.fatbin"] == ("ptx_too_new", "9.0"), v  # header version of nvcc 13 PTX
assert v["k75.ptx"][0] == "ptx_too_new", v
i = d["files"][0]["images"][0]
assert "CUDA 13.0 toolkit" in i["reason"] and "CUDA 12.4 driver JITs up to ISA 8.4" in i["reason"], i["reason"]
assert "upgrade the driver to 580" in i["fix"], i["fix"]' || fail "--driver $d"
done
"$J" scan --arch sm_90 --driver 13.0 --json z_none.fatbin | grep -q '"verdict":"ptx_jit"' ||
    fail "--driver 13.0 refuses PTX 9.0"
rc=0; "$J" scan --arch sm_90 --driver 580.xx sm90.fatbin >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "--driver 580.xx: exit $rc"
rc=0; "$J" scan --arch sm_90 --driver 12.4 --fail-on ptx_too_new z_none.fatbin >/dev/null || rc=$?
[ $rc -eq 1 ] || fail "--fail-on ptx_too_new: exit $rc"

# 12. An architecture CUDA 13 no longer builds: no -gencode nvcc 13 rejects.
"$J" scan --arch sm_70 sm90.fatbin | grep -qF "built with CUDA 12.9 or older (CUDA 13's nvcc no longer builds sm_70)" ||
    fail "sm_70 fix"

if [ $fails -ne 0 ]; then
    echo "test_scan: $fails failure(s)" >&2
    exit 1
fi
echo "test_scan: all passed"
