#!/usr/bin/env bash
# Run by tests/cross/aarch64.sh inside a Debian 11 arm64 root (glibc 2.31,
# where dlsym and dlopen still live in libdl at aarch64's oldest symbol
# version, and gcc 10): builds libjitstall.so there with that gcc and
# -Werror (the link options of interpose/CMakeLists.txt that matter to what
# the loader sees), then checks that python3 under the preload imports
# ctypes and calls into libc through it as without it.
# Usage: glibc231.sh SOURCE_DIR OUT_DIR
set -u
src=$1 out=$2
fail() { echo "FAIL (glibc $(ldd --version | head -1 | awk '{print $NF}')): $*" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/obj" || fail "cannot make $out"
cd "$src" || fail "no $src"
cflags=(-std=gnu11 -O2 -g -fPIC -fvisibility=hidden -ffunction-sections -fdata-sections -Wall -Wextra
        -Wshadow -Wno-unused-parameter -Werror -D_GNU_SOURCE '-DJITSTALL_VERSION="0"'
        -Iinclude -Icommon -Iinterpose -I/usr/local/cuda/include)
printf '%s\n' interpose/*.c interpose/launch_aarch64.S common/*.c |
  xargs -P "${JOBS:-2}" -I{} sh -c 'f=$1; o="$0/obj/$(echo "$f" | tr / _).o"; shift; gcc "$@" -c "$f" -o "$o"' \
    "$out" {} "${cflags[@]}" 2>&1 | sed 's/^/  /'
n_src=$(printf '%s\n' interpose/*.c interpose/launch_aarch64.S common/*.c | wc -l)
n_obj=$(ls "$out"/obj/*.o 2>/dev/null | wc -l)
[ "$n_obj" = "$n_src" ] || fail "gcc $(gcc -dumpversion) -Werror built $n_obj of $n_src objects (above)"
echo "ok: gcc $(gcc -dumpversion) compiles interpose/ and common/ with -Werror"
pre="$out/libjitstall.so"
gcc -shared -nostartfiles -Wl,--no-undefined -Wl,-z,nodelete -Wl,-Bsymbolic-functions -Wl,--gc-sections \
  -o "$pre" "$out"/obj/*.o -lzstd -llz4 -ldl -lpthread || fail "linking $pre"
want='ctypes 8 True'
prog='import ctypes, os; print("ctypes", ctypes.sizeof(ctypes.c_void_p), ctypes.CDLL("libc.so.6").getpid() == os.getpid())'
got=$(python3 -c "$prog" 2>&1) || fail "python3 fails without the preload: $got"
[ "$got" = "$want" ] || fail "python3 printed '$got' without the preload"
got=$(env LD_PRELOAD="$pre" JITSTALL_DIR="$out" python3 -c "$prog" 2>&1) ||
  fail "python3 -c 'import ctypes' under the preload: $got"
[ "$got" = "$want" ] || fail "python3 printed '$got' under the preload, '$want' without"
echo "ok: glibc $(ldd --version | head -1 | awk '{print $NF}'): python3 imports ctypes and calls libc through it under the preload"
