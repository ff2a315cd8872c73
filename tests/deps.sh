#!/usr/bin/env bash
# Sourced by tests/run.sh and examples/demo.sh: makes sure the Debian packages
# they need are there (installs them as root, else prints the apt-get line).
# What the build needs (the demo needs no more: the simulated driver is built
# with the tests, so cmocka and Python's interpreter are among them):
jst_build_pkgs=(build-essential cmake pkg-config libzstd-dev libunwind-dev liblz4-dev
                libelf-dev libdw-dev libjansson-dev libcmocka-dev libcurl4-openssl-dev python3
                go-md2man)
# What the tests use besides (pytest, xmllint, man, promtool and node_exporter's
# textfile format, a venv for the OTLP test, zsh and fish for their completions,
# ninja for a build tool run as torch runs it):
jst_need_pkgs=("${jst_build_pkgs[@]}" python3-pytest libxml2-utils man-db
               python3-venv python3-setuptools prometheus prometheus-node-exporter zsh fish
               ninja-build)
# CI also runs the fuzz targets, which need clang's libFuzzer.
if [ "${CI:-}" = true ] || [ "${JITSTALL_FUZZ:-0}" = 1 ]; then
  jst_need_pkgs+=(clang)
fi
# jst_deps: what the tests need; jst_deps build: what the build needs.
jst_deps() {
  local missing=() p pkgs=("${jst_need_pkgs[@]}")
  [ "${1:-}" = build ] && pkgs=("${jst_build_pkgs[@]}")
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "jitstall: installing ${missing[*]}"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
        return 1
    else
      echo "jitstall: missing packages; run as root, or install them with:" >&2
      echo "  sudo apt-get install -y ${missing[*]}" >&2
      return 2
    fi
  fi
  [ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
  if [ ! -e /usr/local/cuda/include/cuda.h ] && ! command -v nvcc >/dev/null; then
    echo "jitstall: the CUDA toolkit's headers (cuda.h) are needed: install the CUDA toolkit" >&2
    return 2
  fi
  [ "${1:-}" = build ] && return 0
  jst_pyvenv || return $?
  return 0
}

# The OTLP test parses exports with the OpenTelemetry protobuf definitions,
# from PyPI (opentelemetry-proto): a venv at .pyvenv, made once.
jst_pyvenv() {
  local top v
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  v="$top/.pyvenv"
  if [ -x "$v/bin/python" ] && "$v/bin/python" -c 'import opentelemetry.proto' 2>/dev/null; then
    return 0
  fi
  echo "jitstall: making $v with opentelemetry-proto (for the OTLP export test)"
  /usr/bin/python3 -m venv "$v" && "$v/bin/python" -m pip install -q --disable-pip-version-check \
    opentelemetry-proto || {
    echo "jitstall: could not install opentelemetry-proto from PyPI into $v" >&2
    return 2
  }
}
