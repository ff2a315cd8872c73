"""PyTorch under the preload (tests/gpu/run.sh): cuBLAS matmuls, an elementwise
kernel and a reduction. Prints only values that do not depend on timing, so
stdout can be compared with and without libjitstall.so."""
import torch

torch.manual_seed(0)
a = torch.randn(512, 512, device="cuda")
b = torch.randn(512, 512, device="cuda")
c = a @ b
d = torch.nn.functional.gelu(c).sum(dim=1)
h = (a.half() @ b.half()).float()
torch.cuda.synchronize()
print("matmul", round(c.double().abs().sum().item(), 0))
print("gelu-rowsum", round(d.double().abs().sum().item(), 0))
print("half-matmul-close", bool(torch.allclose(h, c, atol=2.0, rtol=0.05)))
