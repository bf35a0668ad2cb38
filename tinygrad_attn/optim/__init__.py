"""Optimizers and learning-rate schedulers, as `torch.optim` (same names, arguments, defaults,
checks, state_dict layout and update formulas).

    opt = optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=1000)
    ...; loss.backward(); opt.step(); sched.step(); opt.zero_grad()

`Optimizer` (optimizer.py) holds the groups, state and checkpoints; flat.py the flat buffers a
step runs on; sgd.py, adam.py, rmsprop.py, adagrad.py the formulas; `lr_scheduler` the schedulers.
This package must not build graph nodes: an optimizer reads `.grad` and writes parameters in
place, as PyTorch's does under `no_grad`.
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
