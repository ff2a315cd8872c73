#!/usr/bin/env bash
# The aarch64 build and its tests on an x86-64 Debian machine: cross-builds
# with cmake/aarch64-linux-gnu.cmake and Debian's multiarch arm64 libraries,
# then runs the whole ctest suite in an arm64 Debian 12 root file system
# under qemu-user (bash, python3 and every program there are aarch64), with
# JITSTALL_EMULATED=1 so that the few tests that cannot mean anything under
# emulation skip and say why. Then the preload against glibc 2.31 (a Debian
# 11 arm64 root): a preloaded python3 that imports ctypes, and a traced
# program on the simulated driver.
# As root it installs what it needs (cross compiler, qemu-user-static,
# debootstrap, the arm64 -dev packages) and makes the two root file systems
# once under $JITSTALL_CROSS_DIR (default /var/cache/jitstall-cross).
# e2e.sanitized_c is left out: on aarch64 libjitstall.so's dlsym is the C
# one already, so it would repeat e2e.sanitized, the slowest test here.
# Usage: tests/cross/aarch64.sh [extra ctest options]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cross=${JITSTALL_CROSS_DIR:-/var/cache/jitstall-cross}
mirror=${JITSTALL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=$(nproc 2>/dev/null || echo 2)
bld="$top/build-aarch64"
old=/tmp/jitstall-glibc231 # inside the Debian 11 root
say() { echo "tests/cross/aarch64.sh: $*"; }
die() { echo "tests/cross/aarch64.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root: it installs packages, makes arm64 root file systems and chroots into them"
[ "$(dpkg --print-architecture)" = amd64 ] || die "made for an x86-64 Debian host"

# ---- the host: cross compiler, qemu, the arm64 libraries ----
. tests/deps.sh
host_pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static
           binfmt-support debootstrap cmake pkg-config)
arm_pkgs=(libc6-dev:arm64 libstdc++6:arm64)
for p in libzstd-dev liblz4-dev libunwind-dev libelf-dev libdw-dev libjansson-dev libcmocka-dev; do
  arm_pkgs+=("$p:arm64")
done
# Whatever else tests/deps.sh has the build link against (libcurl, ...).
for p in "${jst_need_pkgs[@]}"; do
  case $p in lib*-dev) [[ " ${arm_pkgs[*]} " == *" $p:arm64 "* ]] || arm_pkgs+=("$p:arm64") ;; esac
done
missing=()
for p in "${host_pkgs[@]}" "${arm_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ -e /usr/local/cuda/include/cuda.h ] || die "the CUDA toolkit's headers (cuda.h) are needed"

# aarch64 programs run through binfmt_misc (flag F: also inside a chroot).
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 ||
  die "qemu-aarch64's binfmt entry lacks the F flag: programs cannot run inside the chroot"

# ---- the arm64 root file systems ----
# make_root NAME SUITE BASE EXTRA: $cross/NAME, debootstrapped once with the
# packages BASE; the packages EXTRA installed into it (again whenever the
# list changes).
make_root() {
  local dir="$cross/$1"
  if [ ! -e "$dir/.jst-ready" ] || [ "$(cat "$dir/.jst-ready")" != "$3" ]; then
    say "making the $2 arm64 root in $dir (once; several minutes)"
    rm -rf "$dir"
    mkdir -p "$cross"
    debootstrap --arch=arm64 --variant=minbase --include="$3" "$2" "$dir" "$mirror" >"$cross/$1.log" 2>&1 ||
      die "debootstrap $2 failed: see $cross/$1.log"
    echo "$3" >"$dir/.jst-ready"
  fi
  if [ -n "$4" ] && { [ ! -e "$dir/.jst-extra" ] || [ "$(cat "$dir/.jst-extra")" != "$4" ]; }; then
    say "installing ${4//,/ } into the $2 arm64 root"
    mount --rbind /dev "$dir/dev" && mount -t proc proc "$dir/proc"
    local rc=0
    chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      bash -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"' - ${4//,/ } \
      >>"$cross/$1.log" 2>&1 || rc=$?
    umount -l "$dir/dev" "$dir/proc"
    [ "$rc" = 0 ] || die "apt-get install in the $2 root failed: see $cross/$1.log"
    echo "$4" >"$dir/.jst-extra"
  fi
  # ctest's emulator setting names the host's qemu: the same path inside.
  cp -f "$(command -v qemu-aarch64-static)" "$dir/usr/bin/qemu-aarch64-static"
}
# What the tests run: bash, python3 (pytest), ctest, nm, zstd, the sanitizer
# runtimes, the shared libraries the CLI and the tests link (libcurl4 among
# the extras); a C compiler
# (the demo builds its example), man (the man page test), venv (the pytest
# plugin's test), promtool and the node exporter (the fleet tests).
make_root bookworm-arm64 bookworm python3,python3-pytest,cmake,libzstd1,liblz4-1,libunwind8,libelf1,libdw1,libjansson4,libcmocka0,libstdc++6,libasan8,libtsan2,binutils,zstd,procps,file \
  gcc,libc6-dev,man-db,python3-venv,python3-setuptools,python3-wheel,make,g++,prometheus,prometheus-node-exporter,libcurl4
# glibc 2.31: the headers and libraries to build against, python3, and
# Debian 11's gcc 10, which must build the preload without a warning.
make_root bullseye-arm64 bullseye python3,libc6-dev,libzstd-dev,liblz4-dev,libunwind-dev,libelf-dev,libdw-dev,libjansson-dev,libcmocka-dev,libstdc++6 \
  gcc

# ---- the cross build ----
werror=OFF
[ "${CI:-}" = true ] && werror=ON
t0=$(date +%s)
# The tests name their Python by path: Debian's, which the root has too.
cmake -S . -B "$bld" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/aarch64-linux-gnu.cmake" -DJITSTALL_WERROR="$werror" \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$bld" -j"$jobs"
say "cross build: $(($(date +%s) - t0)) s"

# ---- ctest in the bookworm root ----
root="$cross/bookworm-arm64"
mounts=()
bind() { # bind SRC: the same path inside $root
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1"
  mounts=("$root$1" "${mounts[@]}")
}
cleanup() {
  local m
  for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"
# /tmp a file system of its own, as on most machines: inside the chroot,
# /proc/self/mountinfo shows only the mounts below its root, and the tests
# that check where a cache lies (tmpfs, an overlay) need one to cover /tmp.
# Mounted first: a checkout under /tmp is bound on top of it.
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" && mounts=("$root/tmp" "${mounts[@]}")
bind "$top"
bind /usr/local/cuda/include # the demo compiles its example against cuda.h
for d in proc dev sys; do
  mkdir -p "$root/$d"
  mount --rbind "/$d" "$root/$d"
  mounts=("$root/$d" "${mounts[@]}")
done
log=$(mktemp)
t0=$(date +%s)
rc=0
chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
  JITSTALL_EMULATED=1 bash -c 'cd "$1" && shift && ctest --output-on-failure -j"$0" --timeout 900 "$@"' \
  "$jobs" "$bld" -E '^e2e\.sanitized_c$' "$@" 2>&1 | tee "$log" || rc=$?
say "ctest under qemu: $(($(date +%s) - t0)) s"
grep -q '100% tests passed' "$log" || rc=1
skipped=$(grep -c '\*\*\*Skipped' "$log" || true)
line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
rm -f "$log"
cleanup
mounts=()

# ---- glibc 2.31 (Debian 11): gcc 10 builds the preload, python3 under it ----
root="$cross/bullseye-arm64"
t0=$(date +%s)
bind "$top"
bind /usr/local/cuda/include
mount -t proc proc "$root/proc" && mounts=("$root/proc" "${mounts[@]}")
old_rc=0
chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 JOBS="$jobs" \
  bash "$top/tests/cross/glibc231.sh" "$top" "$old" || old_rc=$?
cleanup
mounts=()
trap - EXIT
say "glibc 2.31: $(($(date +%s) - t0)) s"
[ "$old_rc" = 0 ] || rc=1

say "${line:-no ctest summary} ($skipped skipped under emulation); glibc 2.31: $([ "$old_rc" = 0 ] && echo ok || echo FAILED)"
exit $rc
