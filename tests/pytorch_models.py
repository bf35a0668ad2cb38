"""Helpers for the PyTorch-compatibility tests: load a model file with only its imports swapped.

`load_model(path, "tinygrad_attn")` or `load_model(path, "torch")` executes the file's source
with its import lines pointing at the chosen library; nothing else in the text changes.
No torch import here, so the torch-free tests can use it.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "demos" / "05_nanogpt_style.py"

# (pattern of the import line, its PyTorch form, its tinygrad_attn form)
IMPORTS = [
    (
        r"import (torch|tinygrad_attn as torch)(\s+#.*)?",
        "import torch",
        "import tinygrad_attn as torch",
    ),
    (
        r"import (torch|tinygrad_attn)\.nn as nn(\s+#.*)?",
        "import torch.nn as nn",
        "import tinygrad_attn.nn as nn",
    ),
    (
        r"from (torch|tinygrad_attn)\.nn import functional as F(\s+#.*)?",
        "from torch.nn import functional as F",
        "from tinygrad_attn.nn import functional as F",
    ),
    (
        r"import (torch|tinygrad_attn)\.nn\.functional as F(\s+#.*)?",
        "import torch.nn.functional as F",
        "import tinygrad_attn.nn.functional as F",
    ),
    (
        r"from (torch|tinygrad_attn)\.utils\.data import DataLoader, Dataset(\s+#.*)?",
        "from torch.utils.data import DataLoader, Dataset",
        "from tinygrad_attn.utils.data import DataLoader, Dataset",
    ),
]


def swap_imports(source: str, library: str) -> tuple[str, int]:
    """The source with its import lines pointing at `library`, and how many lines changed."""
    lines, changed = source.splitlines(), 0
    for i, line in enumerate(lines):
        for pattern, torch_form, ours in IMPORTS:
            if re.fullmatch(pattern, line):
                new = torch_form if library == "torch" else ours
                changed += new != line
                lines[i] = new
    return "\n".join(lines) + "\n", changed


def load_model(path: Path, library: str, name: str = "model_under_test") -> types.ModuleType:
    source, _ = swap_imports(Path(path).read_text(encoding="utf-8"), library)
    module = types.ModuleType(f"{name}_{library}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module
