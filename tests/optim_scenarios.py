"""Optimizer and scheduler scenarios written once for either library: `lib` is `torch` or
`tinygrad_attn` (the same spellings work in both), and each function returns plain Python data.

tests/data/make_torch_optim_values.py runs them with PyTorch and records what it gave
(tests/data/torch_optim_values.json); tests/test_optim_pytorch_values.py runs them here and
compares, without PyTorch; tests/test_optim_vs_torch.py runs both when PyTorch is installed.
No torch import here.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

STEPS = 30  # scheduler steps recorded per scenario
SHAPES = ((3, 4), (5,), (2, 2, 3))


# ------------------------------------------------------------------------------ schedulers
def _optimizer(lib: Any, kind: str = "sgd", groups: int = 1) -> Any:
    params = [lib.nn.Parameter(lib.zeros(2)) for _ in range(groups)]
    spec = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if kind == "sgd":
        return lib.optim.SGD(spec, lr=0.1, momentum=0.9)
    return lib.optim.Adam(spec, lr=0.1)


def _schedulers(lib: Any, name: str) -> list:
    """The schedulers of scenario `name`, all stepped after every optimizer step."""
    L = lib.optim.lr_scheduler
    o = _optimizer(lib, "adam" if "adam" in name else "sgd", 2 if "groups" in name else 1)
    make = {
        "LambdaLR-groups": lambda: [L.LambdaLR(o, lambda e: 0.95**e)],
        "LambdaLR-per-group-groups": lambda: [
            L.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1.0 / (e + 1)])
        ],
        "MultiplicativeLR": lambda: [L.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.05)],
        "StepLR-groups": lambda: [L.StepLR(o, step_size=4, gamma=0.5)],
        "MultiStepLR": lambda: [L.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3)],
        "ConstantLR": lambda: [L.ConstantLR(o, factor=0.25, total_iters=6)],
        "LinearLR-groups": lambda: [
            L.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=13)
        ],
        "ExponentialLR": lambda: [L.ExponentialLR(o, gamma=0.93)],
        "PolynomialLR": lambda: [L.PolynomialLR(o, total_iters=17, power=2.0)],
        "CosineAnnealingLR-groups": lambda: [L.CosineAnnealingLR(o, T_max=7, eta_min=0.001)],
        "CyclicLR": lambda: [
            L.CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=3, mode="triangular2")
        ],
        "CyclicLR-exp-range-adam": lambda: [
            L.CyclicLR(o, [0.01], 0.2, step_size_up=5, mode="exp_range", gamma=0.97)
        ],
        "OneCycleLR": lambda: [L.OneCycleLR(o, max_lr=1.0, total_steps=31)],
        "OneCycleLR-three-phase-linear-adam-groups": lambda: [
            L.OneCycleLR(
                o,
                [0.5, 0.8],
                epochs=3,
                steps_per_epoch=11,
                three_phase=True,
                anneal_strategy="linear",
            )
        ],  # fmt: skip
        "CosineAnnealingWarmRestarts": lambda: [
            L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)
        ],
        "two-schedulers-compose-groups": lambda: [L.ExponentialLR(o, 0.9), L.StepLR(o, 5, 0.5)],
        "ChainedScheduler": lambda: [
            L.ChainedScheduler(
                [L.ConstantLR(o, factor=0.5, total_iters=4), L.ExponentialLR(o, 0.95)]
            )
        ],
        "SequentialLR-groups": lambda: [
            L.SequentialLR(
                o,
                [
                    L.LinearLR(o, start_factor=0.2, total_iters=5),
                    L.CosineAnnealingLR(o, T_max=10),
                    L.ExponentialLR(o, 0.9),
                ],
                milestones=[5, 15],
            )
        ],  # fmt: skip
    }
    return make[name]()


SCHEDULER_SCENARIOS = [
    "LambdaLR-groups",
    "LambdaLR-per-group-groups",
    "MultiplicativeLR",
    "StepLR-groups",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR-groups",
    "ExponentialLR",
    "PolynomialLR",
    "CosineAnnealingLR-groups",
    "CyclicLR",
    "CyclicLR-exp-range-adam",
    "OneCycleLR",
    "OneCycleLR-three-phase-linear-adam-groups",
    "CosineAnnealingWarmRestarts",
    "two-schedulers-compose-groups",
    "ChainedScheduler",
    "SequentialLR-groups",
]
# scenarios also run with `group["lr"]` set by hand after step 10
MANUAL = [
    "StepLR-groups",
    "ExponentialLR",
    "CosineAnnealingLR-groups",
    "two-schedulers-compose-groups",
    "SequentialLR-groups",
    "LinearLR-groups",
]


def _plain(value: Any) -> Any:
    """A state_dict value as JSON can hold it (Counters, tuples and infinities simplified)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return repr(value)
    return value


def run_scheduler(lib: Any, name: str, manual: bool = False) -> dict:
    """Each step's lrs (and cycled momentum) of every group, the last `get_last_lr()`, the
    state_dict and the groups' keys."""
    schedulers = _schedulers(lib, name)
    opt = schedulers[0].optimizer
    seen = []
    for t in range(STEPS):
        groups = opt.param_groups
        seen.append(
            [g["lr"] for g in groups]
            + [g["momentum"] if "momentum" in g else g["betas"][0] for g in groups]
        )
        opt.step()
        if manual and t == 10:
            for g in groups:
                g["lr"] = g["lr"] * 0.5 + 0.001
        for scheduler in schedulers:
            scheduler.step()
    state = schedulers[-1].state_dict()
    return {
        "lrs": seen,
        "last_lr": list(schedulers[-1].get_last_lr()),
        "state_dict": _plain(state),
        "group_keys": [list(g) for g in opt.param_groups],
    }


def run_plateau(lib: Any, **options: Any) -> dict:
    p, q = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 1.0}], lr=0.1)
    scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **options)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85] + [0.7] * 9
    lrs = []
    for metric in metrics:
        opt.step()
        scheduler.step(lib.tensor(metric))
        lrs.append(list(scheduler.get_last_lr()))
    return {"lrs": lrs, "state_dict": _plain(scheduler.state_dict())}


PLATEAU_SCENARIOS = {
    "patience-2": dict(patience=2),
    "max-cooldown": dict(mode="max", patience=1, factor=0.5, cooldown=2),
    "abs-min-lrs": dict(threshold_mode="abs", threshold=0.06, patience=0, min_lr=[0.02, 0.5]),
}


def run_closed_form(lib: Any) -> list:
    """`step(epoch)` jumps with the closed form (and warns, as deprecated)."""
    out = []
    for make in (
        lambda o: lib.optim.lr_scheduler.StepLR(o, 3, 0.5),
        lambda o: lib.optim.lr_scheduler.MultiStepLR(o, [2, 5], 0.1),
        lambda o: lib.optim.lr_scheduler.CosineAnnealingLR(o, 10, 0.01),
        lambda o: lib.optim.lr_scheduler.LinearLR(o, 0.5, total_iters=4),
        lambda o: lib.optim.lr_scheduler.PolynomialLR(o, 6, 0.5),
        lambda o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 4, 2),
    ):
        opt = _optimizer(lib)
        scheduler = make(opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (7, 3, 12, 0, 5):
                opt.step()
                scheduler.step(epoch)
                out.append(scheduler.get_last_lr()[0])
    return out


# ------------------------------------------------------------------------------ optimizers
OPTIMIZER_SCENARIOS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9), eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, amsgrad=True, weight_decay=0.3)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, maximize=True)),
]


def scenario_id(name: str, options: dict) -> str:
    return name + "(" + ", ".join(f"{k}={v}" for k, v in options.items()) + ")"


def optimizer_data(dtype: Any, steps: int = 5) -> tuple:
    """Initial values and each step's gradients, from a NumPy generator (the same everywhere)."""
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    return start, grads


def run_optimizer(lib: Any, name: str, options: dict, dtype: Any) -> dict:
    """Parameters and the first parameter's state after the steps, as hex of their bytes."""
    start, grads = optimizer_data(dtype)
    params = [lib.nn.Parameter(lib.from_numpy(a.copy())) for a in start]
    opt = getattr(lib.optim, name)(params, **options)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = lib.from_numpy(g.copy())
        opt.step()
    state = {k: v.detach().numpy().tobytes().hex() for k, v in opt.state[params[0]].items()}
    return {
        "params": [p.detach().numpy().tobytes().hex() for p in params],
        "state": state,
        "state_dtypes": {
            k: str(v.dtype).replace("torch.", "") for k, v in opt.state[params[0]].items()
        },
    }


def from_hex(text: str, dtype: Any, shape: tuple = (-1,)) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(text), dtype=dtype).reshape(shape)


# ------------------------------------------------------------------------------ checkpoints
def checkpoint_setup(lib: Any, kind: str) -> tuple:
    """Parameters in two groups and their optimizer (AdamW with amsgrad, or SGD with
    momentum), as the checkpoint test makes them in either library."""
    rng = np.random.default_rng(7)
    params = [
        lib.nn.Parameter(lib.from_numpy(rng.standard_normal(s).astype(np.float32)))
        for s in ((4, 3), (3,), (2, 5))
    ]
    groups = [{"params": params[:2]}, {"params": params[2:], "lr": 0.003, "weight_decay": 0.0}]
    if kind == "adamw":
        return params, lib.optim.AdamW(groups, lr=0.01, betas=(0.8, 0.95), amsgrad=True)
    return params, lib.optim.SGD(groups, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)


def checkpoint_grads(step: int) -> list:
    rng = np.random.default_rng(100 + step)
    return [rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3,), (2, 5))]
