"""`torch.backends.cuda`: settable flags with no effect (`matmul.allow_tf32 = True` in
training scripts)."""

from types import SimpleNamespace

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)


def is_built() -> bool:
    return False
