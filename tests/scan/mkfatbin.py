#!/usr/bin/env python3
"""Writes a file of synthetic fatbins back to back, as an ELF object's
.nv_fatbin section holds them: one fatbin per IMAGE argument, each a
comma-separated list of entries (sm_90, sm_90a, sm_120f: a cubin, with the
kernels of tests/fixtures/sm90.cubin; compute_120: PTX with one kernel).
Lets a test build the images of a large library (cuBLAS's [sm_100
compute_120 sm_120]) without a toolkit that targets those GPUs.
  usage: mkfatbin.py OUT IMAGE [IMAGE...]"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CUBIN = open(os.path.join(HERE, "..", "fixtures", "sm90.cubin"), "rb").read()
FLAG = {"": 0, "a": 0x100000, "f": 0x200000}  # arch-specific, family


def entry(spec):
    ptx = spec.startswith("compute_")
    arch = spec[len("compute_") if ptx else len("sm_"):]
    var = arch[-1] if arch[-1] in "af" else ""
    sm = int(arch[:-1] if var else arch)
    if ptx:
        text = (".version 9.0\n.target sm_%d%s\n.address_size 64\n\n"
                ".visible .entry ptx_kernel_%d()\n{\n\tret;\n}\n" % (sm, var, sm)).encode()
        payload, kind, isa = text + b"\0", 1, (9, 0)
    else:
        payload, kind, isa = CUBIN, 2, (0, 0)
    payload += b"\0" * (-len(payload) % 8)
    hdr = struct.pack("<HHIQIIHHI", kind, 0x101, 64, len(payload), 0, 0, isa[1], isa[0], sm)
    hdr += struct.pack("<QQQQ", 0, FLAG[var], 0, 0)
    assert len(hdr) == 64
    return hdr + payload


def fatbin(image):
    body = b"".join(entry(s) for s in image.split(","))
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "wb") as f:
        for image in sys.argv[2:]:
            f.write(fatbin(image))


if __name__ == "__main__":
    main()
