# A small multi-layer model under torch.compile, for tests/gpu/part_workers.sh:
# four blocks of Linear, LayerNorm and GELU. Inductor compiles its Triton
# kernels in a compile-worker process and the pool of workers that process
# forks; each worker runs Triton's compile and its ptxas. The program times
# its own first call.
#   python3 workers_model.py
# Prints FIRST_CALL_NS n and FIRST_CALL_MONO start end (CLOCK_MONOTONIC).
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = torch.nn.Linear(d, d)
        self.norm = torch.nn.LayerNorm(d)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(self.lin(x))) + x


def pool_ready(timeout_s=90.0):
    """Inductor compiles in its own process until its worker pool has
    started; starts the pool and waits for it, so that the pool's workers
    do the compiling. Says what it found (the API differs by version)."""
    try:
        from torch._inductor.async_compile import AsyncCompile
    except ImportError as e:
        print(f"POOL no AsyncCompile ({e})")
        return
    warm = getattr(AsyncCompile, "warm_pool", None)
    if warm:
        warm()
    use = getattr(AsyncCompile, "use_process_pool", None)
    if not use:
        print("POOL no use_process_pool: waiting 10 s for the pool")
        time.sleep(10)
        return
    t0 = time.monotonic()
    while not use() and time.monotonic() - t0 < timeout_s:
        time.sleep(0.2)
    print(f"POOL ready={bool(use())} after {time.monotonic() - t0:.1f} s")


model = torch.nn.Sequential(*[Block(256) for _ in range(4)]).cuda()
pool_ready()
g = torch.compile(model)
x = torch.randn(64, 256, device="cuda")
torch.cuda.synchronize()
t0 = time.monotonic_ns()
with torch.no_grad():
    g(x)
torch.cuda.synchronize()
t1 = time.monotonic_ns()
print(f"FIRST_CALL_NS {t1 - t0}")
print(f"FIRST_CALL_MONO {t0} {t1}")
