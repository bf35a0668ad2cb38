"""Writes the PyTorch checkpoints that tests/test_serialization.py reads without PyTorch.

Run with PyTorch installed (it is not a dependency of the project, nor of its tests):
    python tests/data/make_torch_checkpoints.py
The tests hold the numbers these files contain; change both together.
"""

from collections import OrderedDict
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def checkpoint() -> dict:
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 - 1.0
    model = OrderedDict()
    model["linear.weight"] = base  # float32 (3, 4), storage 0
    model["linear.bias"] = torch.tensor([0.25, -0.5, 1.0])
    model["row"] = base[1]  # a view at offset 4 of storage 0
    model["cols"] = base[:, 1:3]  # a strided view at offset 1 of storage 0
    model["transposed"] = base.t()  # strides (1, 4) over storage 0
    model["double"] = torch.tensor([1.0 / 3.0, -2.5], dtype=torch.float64)
    model["half"] = torch.tensor([0.5, -1.25, 65504.0], dtype=torch.float16)
    model["int8"] = torch.tensor([-128, 0, 127], dtype=torch.int8)
    model["uint8"] = torch.tensor([0, 200, 255], dtype=torch.uint8)
    model["int16"] = torch.tensor([-32768, 12345], dtype=torch.int16)
    model["int32"] = torch.tensor([[-(2**31), 7]], dtype=torch.int32)
    model["int64"] = torch.tensor([-(2**40), 2**40 + 1], dtype=torch.int64)
    model["bool"] = torch.tensor([True, False, True])
    model["scalar"] = torch.tensor(2.5)  # 0-d
    model["empty"] = torch.zeros(0, 4)
    model["param"] = torch.nn.Parameter(torch.tensor([[1.0, 2.0]]))
    optimizer = {
        "state": {
            0: {"step": torch.tensor(3.0), "exp_avg": torch.full((3,), 0.125)},
            1: {"step": torch.tensor(3.0), "exp_avg": torch.zeros(2, 2)},
        },
        "param_groups": [
            {
                "lr": 0.001,
                "betas": (0.9, 0.999),
                "eps": 1e-08,
                "weight_decay": 0.01,
                "amsgrad": False,
                "foreach": None,
                "params": [0, 1],
            }
        ],
    }
    return {
        "model": model,
        "optimizer": optimizer,
        "epoch": 7,
        "loss": 1.5,
        "name": "tiny",
        "dtype": torch.float32,
        "shape": torch.Size([2, 3]),
    }


if __name__ == "__main__":
    torch.save(checkpoint(), HERE / "torch_checkpoint.pt")
    torch.save({"w": torch.ones(2, dtype=torch.bfloat16)}, HERE / "torch_bfloat16.pt")
    print("wrote", HERE / "torch_checkpoint.pt", HERE / "torch_bfloat16.pt")
