"""`tinygrad_attn.nn.functional`: PyTorch's spelling of the functional forms
(`import torch.nn.functional as F` carries over as `import tinygrad_attn.nn.functional as F`).

The functions live in `tinygrad_attn.functional` (a file per kind); this module only re-exports
its public names, so both spellings give the same functions. It must define nothing of its own.
"""

from ..functional import *  # noqa: F403
from ..functional import __all__  # noqa: F401
