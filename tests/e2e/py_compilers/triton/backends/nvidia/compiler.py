# A stand-in for Triton's compiler (tests of compile capture): lowering in
# Python (CPU-bound), then ptxas in a subprocess, as Triton's make_cubin does.
import subprocess


def lower(n):
    x = 0
    for i in range(n):
        x = (x + i * i) % 1000003
    return x


def make_cubin(ptxas, src, out, n):
    lower(n)
    subprocess.run([ptxas, "--gpu-name=sm_90a", "-o", out, src], check=True)
    return out
