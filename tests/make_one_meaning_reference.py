"""Write what PyTorch gives for every case of tests/one_meaning_cases.py into
tests/data/one_meaning_reference.json. Run with PyTorch installed (never needed by the tests):

    python tests/make_one_meaning_reference.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from one_meaning_cases import CASES, outcome  # noqa: E402

OUT = Path(__file__).resolve().parent / "data" / "one_meaning_reference.json"


def main() -> None:
    reference = {
        "torch": torch.__version__,
        "cases": {c: outcome(c, torch, np) for c in CASES},
        # PyTorch's public names, so the walker can run where torch is not installed
        "module_names": sorted(n for n in dir(torch) if not n.startswith("_")),
        "tensor_names": sorted(dir(torch.Tensor)),
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(reference, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(CASES)} cases written to {OUT}")


if __name__ == "__main__":
    main()
