"""A small inference server's start, for tests/gpu/part_server.sh: a model
under torch.compile(dynamic=False) warms up on two shapes, writes a ready
file (the way servers tell their own probes), waits, then serves a request of
a third shape, which Inductor compiles again: a late compile.

Usage: server_torch.py READY_FILE WAIT_S"""
import sys
import time

import torch


@torch.compile(dynamic=False)
def model(x):
    return torch.nn.functional.gelu(x * 2.0 + 1.0).sum(dim=-1)


def serve(n):
    out = model(torch.randn(n, 64, device="cuda"))
    torch.cuda.synchronize()
    return tuple(out.shape)


for n in (256, 512):  # warm-up
    print("warm", serve(n), flush=True)
open(sys.argv[1], "w").close()
print("ready", flush=True)
time.sleep(float(sys.argv[2]))
print("served", serve(768), flush=True)  # request: late compile
time.sleep(1.5)  # one more live file after it
