"""Records what PyTorch gives for the scenarios of tests/optim_scenarios.py, for the tests that
run without PyTorch (tests/test_optim_pytorch_values.py):

    tests/data/torch_optim_values.json   lr sequences, scheduler state_dicts, optimizer steps
    tests/data/torch_optim_state.pt      optimizer checkpoints written by torch.save

Run with PyTorch installed (it is not a dependency of the project, nor of its tests):
    python tests/data/make_torch_optim_values.py
"""

import copy
import json
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import optim_scenarios as S  # noqa: E402


def checkpoints() -> tuple:
    """Each optimizer after 3 steps (saved), and what one more step gives (recorded)."""
    saved, expected = {}, {}
    for kind in ("adamw", "sgd"):
        params, opt = S.checkpoint_setup(torch, kind)
        for step in range(3):
            for p, g in zip(params, S.checkpoint_grads(step)):
                p.grad = torch.from_numpy(g)
            opt.step()
        # (a deep copy: the state_dict holds the live state, which the next step changes)
        saved[kind] = copy.deepcopy(
            {"optimizer": opt.state_dict(), "params": [p.detach() for p in params]}
        )
        for p, g in zip(params, S.checkpoint_grads(3)):
            p.grad = torch.from_numpy(g)
        opt.step()
        expected[kind] = {
            "params": [p.detach().numpy().tobytes().hex() for p in params],
            "state": [
                {k: v.numpy().tobytes().hex() for k, v in opt.state[p].items()} for p in params
            ],
        }
    torch.save(saved, HERE / "torch_optim_state.pt")
    return expected


def main() -> None:
    torch.set_default_dtype(torch.float32)
    values = {
        "torch_version": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "schedulers": {name: S.run_scheduler(torch, name) for name in S.SCHEDULER_SCENARIOS},
        "schedulers_manual": {name: S.run_scheduler(torch, name, True) for name in S.MANUAL},
        "plateau": {k: S.run_plateau(torch, **v) for k, v in S.PLATEAU_SCENARIOS.items()},
        "closed_form": S.run_closed_form(torch),
        "optimizers": {
            f"{np.dtype(dtype).name} {S.scenario_id(name, options)}": S.run_optimizer(
                torch, name, options, dtype
            )
            for dtype in (np.float32, np.float64)
            for name, options in S.OPTIMIZER_SCENARIOS
        },
        "checkpoints": checkpoints(),
    }
    (HERE / "torch_optim_values.json").write_text(json.dumps(values, indent=1) + "\n")


if __name__ == "__main__":
    main()
