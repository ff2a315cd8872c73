"""PyTorch's first CUDA op, for tests/gpu/part_python.sh: cudart loads the
kernel's fatbin with cuLibraryLoadData (the GIL released) at the first
launch, and the report must name the line marked "first op:" below."""
import torch


def first_op():
    x = torch.ones(1024, device="cuda")  # first op: torch
    return float((x * 2).sum())


print("sum", first_op())
