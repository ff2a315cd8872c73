#!/usr/bin/env bash
# A packaged install: configured with a Debian multiarch libdir
# (-DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu), installed with --prefix and
# with DESTDIR; the installed `jitstall run` finds the installed
# libjitstall.so and traces a program; the installed jitstall.pc gives the
# flags that compile a program against the installed jitstall/format.h.
# usage: test_install.sh SRC_DIR WORK_DIR  (env: JST_SIMDIR, JST_PROG_DIRECT, JST_FIXTURES)
set -euo pipefail
src=$1 work=$2
# Under qemu-user (tests/cross/aarch64.sh) this would configure and build the
# whole project inside the arm64 root, whose CUDA toolkit is its headers only
# (no nvcc for find_package(CUDAToolkit)); the install layout is the same on
# both architectures and is checked by the native run.
if [ "${JITSTALL_EMULATED:-0}" = 1 ]; then
  echo "skip: under qemu-user emulation: the arm64 root cannot configure the project (CUDA headers only)"
  exit 77
fi
for v in JST_SIMDIR JST_PROG_DIRECT JST_FIXTURES; do
  [ -n "${!v:-}" ] || { echo "skip: $v not set (the preload tests are not built)"; exit 77; }
done
fail() { echo "FAIL: $*" >&2; exit 1; }
B=$work/build # kept between runs: rebuilt incrementally
T=$(mktemp -d /tmp/jst-install-XXXXXX)
trap 'rm -rf "$T"' EXIT
cmake -S "$src" -B "$B" -DJITSTALL_TESTS=OFF -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu >/dev/null
cmake --build "$B" -j2 >/dev/null
ml=lib/x86_64-linux-gnu

# DESTDIR: everything under the staging root, at the configured prefix.
DESTDIR=$T/stage cmake --install "$B" --prefix /opt/jst >/dev/null
for f in bin/jitstall $ml/libjitstall.so include/jitstall/format.h $ml/pkgconfig/jitstall.pc \
         share/man/man1/jitstall.1 share/doc/jitstall/FORMAT.md \
         share/bash-completion/completions/jitstall share/zsh/site-functions/_jitstall \
         share/fish/vendor_completions.d/jitstall.fish; do
  [ -e "$T/stage/opt/jst/$f" ] || fail "DESTDIR install lacks $f: $(cd "$T/stage" && find . -type f)"
done
[ ! -e "$T/stage/opt/jst/lib/libjitstall.so" ] || fail "libjitstall.so in lib/, not $ml"

# --prefix: the installed jitstall run finds the library in $ml.
P=$T/prefix
cmake --install "$B" --prefix "$P" >/dev/null
rc=0
out=$(cd "$T" && LD_LIBRARY_PATH=$JST_SIMDIR "$P/bin/jitstall" run -o "$T/traces" -- \
        "$JST_PROG_DIRECT" "$JST_FIXTURES" 0 module ptx75.fatbin 2>&1) || rc=$?
[ $rc -eq 0 ] || fail "installed jitstall run exited $rc: $out"
ls "$T/traces"/*.jst >/dev/null 2>&1 || fail "no trace written: $out"
# With the library moved away, run says where it looked: proof it used $ml.
mv "$P/$ml/libjitstall.so" "$T/moved.so"
rc=0
out=$(LD_LIBRARY_PATH=$JST_SIMDIR "$P/bin/jitstall" run -o "$T/t3" -- true 2>&1) || rc=$?
[ $rc -eq 2 ] && grep -q "nor in ../$ml" <<<"$out" || fail "without the library: $rc $out"
mv "$T/moved.so" "$P/$ml/libjitstall.so"

# pkg-config: the flags compile a program against the installed header.
command -v pkg-config >/dev/null || fail "pkg-config not found"
cflags=$(PKG_CONFIG_PATH=$P/$ml/pkgconfig pkg-config --cflags jitstall) || fail "pkg-config --cflags"
preload=$(PKG_CONFIG_PATH=$P/$ml/pkgconfig pkg-config --variable=preload jitstall)
[ "$(realpath "$preload")" = "$(realpath "$P/$ml/libjitstall.so")" ] || fail "preload=$preload"
printf '#include <jitstall/format.h>\nint main(void) { return JST_REC_CALL == 3 ? 0 : 1; }\n' >"$T/u.c"
# shellcheck disable=SC2086
cc $cflags -o "$T/u" "$T/u.c" || fail "cc $cflags: the installed header does not compile"
"$T/u" || fail "the installed header's values"
echo "ok: install with $ml, DESTDIR and pkg-config"
