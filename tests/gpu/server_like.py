"""A server-like program for tests/gpu/part_server.sh: torch.compile
(dynamic=False) warms up two shapes, writes the ready file its readiness
probe would look at, waits, then serves a third shape, which recompiles (a
late compile: it stalls that request). usage: server_like.py READY_FILE"""
import sys
import time

import torch


def f(x):
    return torch.sin(x) * 2 + torch.cos(x)


g = torch.compile(f, dynamic=False)
for n in (1024, 2048):  # the warm-up
    g(torch.randn(n, device="cuda"))
torch.cuda.synchronize()
open(sys.argv[1], "w").close()  # ready
time.sleep(3)  # the preload notices the file; a status poll sees "ready"
torch.cuda.nvtx.range_push("request1")
g(torch.randn(4096, device="cuda"))  # a shape the warm-up missed: recompiles
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("served")
