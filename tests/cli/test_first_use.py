#!/usr/bin/env python3
"""What a new user meets first (issue 33): advice that holds for NVIDIA's own
libraries, gates that scanned nothing, readable lengths, and the habits of a
command line (colour, stdin, the command to run next).

Harness: clitest.py. `python3 test_first_use.py --list` names the cases; ctest
runs each as cli.<case>.
"""
import json
import os
import subprocess
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)

HERE = os.path.dirname(os.path.abspath(__file__))
MKFATBIN = os.path.join(HERE, "..", "scan", "mkfatbin.py")


def _variant_load(start_ms, source, h, entries, verdict, result, kernel, **kw):
    ent = " ".join("entry=" + q(e) for e in entries)
    return (f"call call=cuLibraryLoadData start={start_ms}ms dur=1ms result={result} "
            f"image_kind=fatbin_wrapper image_hash={h} source={q(source)} verdict={verdict} "
            f"target_cc=90 kernel={kernel} {ent} "
            + " ".join(f"{k}={v}" for k, v in kw.items()) + "\n")


@case
def test_trace_variants_for_other_gpus(env):
    # cudart hands the driver each of cuBLAS's variants; the one whose PTX is
    # for a newer GPU fails there, and cuBLAS goes on with its sm_90 image.
    # The report applies scan's rule: that load is for other GPUs, not a
    # culprit with a -gencode fix. A library with nothing for sm_90 still is.
    lt, solo = "/opt/lib/libcublasLt.so.13", "/opt/lib/libsolo.so"
    why = q("nothing runs on sm_90")
    head = process() + call("cuInit", 1010, 150)
    head += _variant_load(1200, lt, "0x111", ["cubin sm_100 none", "ptx compute_120 zstd",
                                              "cubin sm_120 none"], "no_compatible", 209,
                          "_Z3k12v", reason=why)
    head += _variant_load(1210, lt, "0x222", ["cubin sm_90 none"], "sass", 0, "_Z3k90v",
                          sass_arch="sm_90")
    tail = launch(1300, kernel="_Z3k90v") + end()
    solo_load = _variant_load(1220, solo, "0x333", ["cubin sm_120 none", "ptx compute_120 zstd"],
                              "no_compatible", 209, "_Z4solov", reason=why)
    t = env.trace("variants", head + solo_load + tail)
    out, _ = env.expect_rc(0, "report", "--json", t)
    mods = json.loads(out)["processes"][0]["modules"]
    v = sorted((m.get("source"), m["verdict"]) for m in mods)
    expect(v == [(lt, "other_gpus"), (lt, "sass"), (solo, "no_compatible")], v)
    text, _ = env.expect_rc(0, "report", t)
    expect("rebuild /opt/lib/libcublasLt" not in text and "rebuild /opt/lib/libsolo.so" in text,
           text)
    # The gate on verdicts agrees: cuBLAS alone passes.
    env.expect_rc(0, "check", "--forbid-verdict", "no_compatible", env.trace("lt", head + tail))
    env.expect_rc(1, "check", "--forbid-verdict", "no_compatible", t)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
