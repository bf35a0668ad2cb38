"""optim against numbers PyTorch 2.13 gave, recorded in tests/data (by
tests/data/make_torch_optim_values.py, with PyTorch's CPU build on an AVX-512 machine), so these
tests need no PyTorch: every scheduler's lr sequence over 30 steps (per-group lrs, two schedulers
composing, SequentialLR's milestones, an lr set by hand mid-way), scheduler state_dicts, SGD and
Adam steps bit for bit, and a PyTorch optimizer checkpoint resumed here.
"""

import json
from pathlib import Path

import numpy as np
import optim_scenarios as S
import pytest

import tinygrad_attn as ta

DATA = Path(__file__).resolve().parent / "data"
TORCH = json.loads((DATA / "torch_optim_values.json").read_text())


@pytest.mark.parametrize("name", S.SCHEDULER_SCENARIOS)
def test_scheduler_lrs_are_pytorchs_exactly(name):
    ours, theirs = S.run_scheduler(ta, name), TORCH["schedulers"][name]
    assert ours["lrs"] == theirs["lrs"]  # the same floats, every step, every group
    assert ours["last_lr"] == theirs["last_lr"]
    assert ours["state_dict"] == theirs["state_dict"]  # same keys, order and values
    assert list(ours["state_dict"]) == list(theirs["state_dict"])
    assert ours["group_keys"] == theirs["group_keys"]  # initial_lr, max_momentum, ... added


@pytest.mark.parametrize("name", S.MANUAL)
def test_a_manual_lr_change_is_respected_as_in_pytorch(name):
    ours, theirs = S.run_scheduler(ta, name, manual=True), TORCH["schedulers_manual"][name]
    assert ours["lrs"] == theirs["lrs"]
    untouched = TORCH["schedulers"][name]["lrs"]
    assert ours["lrs"][12] != untouched[12]  # the change carried on (chainable form)


def test_two_schedulers_on_one_optimizer_compose():
    lrs = TORCH["schedulers"]["two-schedulers-compose-groups"]["lrs"]
    # ExponentialLR(0.9) and StepLR(5, 0.5) together: 0.9 ** t * 0.5 ** (t // 5)
    np.testing.assert_allclose(
        [row[0] for row in lrs], [0.1 * 0.9**t * 0.5 ** (t // 5) for t in range(S.STEPS)]
    )
    assert S.run_scheduler(ta, "two-schedulers-compose-groups")["lrs"] == lrs


@pytest.mark.parametrize("name", sorted(S.PLATEAU_SCENARIOS))
def test_reduce_lr_on_plateau_is_pytorchs(name):
    ours = S.run_plateau(ta, **S.PLATEAU_SCENARIOS[name])
    assert ours == TORCH["plateau"][name]


def test_step_with_an_epoch_uses_the_closed_form_as_pytorch():
    assert S.run_closed_form(ta) == TORCH["closed_form"]


# ------------------------------------------------------------------------------ optimizers
def _ulps(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference, in units in the last place of the array's largest magnitude (a
    value that nearly cancels to 0 counts on the scale of its neighbours, as rounding does)."""
    return float(np.max(np.abs(a - b)) / np.spacing(np.max(np.abs(b))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize(
    "name, options", S.OPTIMIZER_SCENARIOS, ids=[S.scenario_id(*c) for c in S.OPTIMIZER_SCENARIOS]
)
def test_optimizer_steps_are_pytorchs_bits(name, options, dtype):
    """float32 SGD bit for bit (its fused multiply-adds emulated, flat.py); Adam's parameters
    and moments within 1 ulp (PyTorch fuses the moments' multiply-adds, and its sqrt here is
    MKL's, not always correctly rounded); float64 within 2 ulps (no fused multiply-add in NumPy)."""
    key = f"{np.dtype(dtype).name} {S.scenario_id(name, options)}"
    ours, theirs = S.run_optimizer(ta, name, options, dtype), TORCH["optimizers"][key]
    assert ours["state_dtypes"] == theirs["state_dtypes"]  # step: float32, the rest: dtype
    assert list(ours["state"]) == list(theirs["state"])
    if dtype == np.float32 and name == "SGD":
        assert ours == theirs
        return
    pairs = list(zip(ours["params"], theirs["params"]))
    pairs += [(ours["state"][k], theirs["state"][k]) for k in theirs["state"] if k != "step"]
    worst = max(_ulps(S.from_hex(a, dtype), S.from_hex(b, dtype)) for a, b in pairs)
    assert worst <= (1 if dtype == np.float32 else 2)
    assert ours["state"].get("step") == theirs["state"].get("step")


@pytest.mark.parametrize("kind", ["adamw", "sgd"])
def test_a_pytorch_optimizer_checkpoint_resumes_here_as_in_pytorch(kind):
    """torch.save'd by PyTorch after 3 steps; loaded with ta.load (no PyTorch needed), the
    next step gives PyTorch's next step (SGD bit for bit, AdamW within 1 ulp)."""
    checkpoint = ta.load(DATA / "torch_optim_state.pt")[kind]
    state = checkpoint["optimizer"]["state"]
    assert all(type(v) is ta.Tensor for entry in state.values() for v in entry.values())
    if kind == "adamw":
        assert state[0]["step"].shape == () and state[0]["step"].dtype == np.float32
    params, opt = S.checkpoint_setup(ta, kind)
    with ta.no_grad():
        for p, saved in zip(params, checkpoint["params"]):
            p.copy_(saved)
    opt.load_state_dict(checkpoint["optimizer"])
    assert opt.param_groups[1]["lr"] == 0.003 and opt.param_groups[0]["params"] == params[:2]
    for p, g in zip(params, S.checkpoint_grads(3)):
        p.grad = ta.tensor(g)
    opt.step()
    expected = TORCH["checkpoints"][kind]
    for p, theirs in zip(params, expected["params"]):
        assert _ulps(p.numpy(), S.from_hex(theirs, np.float32, p.shape)) <= (kind == "adamw")
    for p, theirs in zip(params, expected["state"]):
        assert list(opt.state[p]) == list(theirs)
        for key, value in theirs.items():
            mine = opt.state[p][key].numpy()
            assert _ulps(mine, S.from_hex(value, mine.dtype, mine.shape)) <= (kind == "adamw")
