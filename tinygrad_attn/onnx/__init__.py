"""`torch.onnx`: importable, so scripts that import it run; exporting a model is not
supported here (a clear error). This package has no ONNX graph writer."""

from __future__ import annotations

from typing import Any


def export(model: Any, args: Any, f: Any = None, *rest: Any, **kwargs: Any) -> None:
    raise NotImplementedError(
        "torch.onnx.export: tinygrad_attn cannot write ONNX files. Save the weights with "
        "ta.save(model.state_dict(), 'model.pt'), load them into the same architecture in "
        "PyTorch, and export from there."
    )


def is_in_onnx_export() -> bool:
    return False
