"""optim: SGD and Adam against their formulas written out in NumPy, over several steps; the
argument checks; skipping parameters without gradients; parameters a live graph holds."""

import copy

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor, optim


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def run_steps(opt, params, grads_per_step):
    """Set the given gradients and step; returns the parameter values after each step."""
    history = []
    for grads in grads_per_step:
        for p, g in zip(params, grads):
            p.grad = g
        opt.step()
        history.append([p.numpy().copy() for p in params])
    return history


def make(rng, *shapes):
    params = [Tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(5)]
    return params, grads


@pytest.mark.parametrize("momentum, weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.8, 0.1)])
def test_sgd_matches_formula(rng, momentum, weight_decay):
    params, grads = make(rng, (3, 2), (4,))
    start = [p.numpy().copy() for p in params]
    opt = optim.SGD(params, lr=0.1, momentum=momentum, weight_decay=weight_decay)
    history = run_steps(opt, params, grads)
    # PyTorch: g = grad + wd * p; buf = g on the first step, else momentum * buf + g; p -= lr * buf
    for i in range(2):
        p, buf = start[i].copy(), None
        for step, step_grads in enumerate(grads):
            g = step_grads[i] + weight_decay * p
            if momentum:
                buf = g.copy() if buf is None else momentum * buf + g
                g = buf
            p = p - 0.1 * g
            np.testing.assert_allclose(history[step][i], p, rtol=1e-12)


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
def test_adam_matches_formula(rng, weight_decay):
    params, grads = make(rng, (3, 2), (4,))
    start = [p.numpy().copy() for p in params]
    lr, (b1, b2), eps = 0.01, (0.8, 0.95), 1e-6
    opt = optim.Adam(params, lr=lr, betas=(b1, b2), eps=eps, weight_decay=weight_decay)
    history = run_steps(opt, params, grads)
    for i in range(2):
        p, m, v = start[i].copy(), 0.0, 0.0
        for t, step_grads in enumerate(grads, start=1):
            g = step_grads[i] + weight_decay * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat = m / (1 - b1**t)
            v_hat = v / (1 - b2**t)
            # PyTorch's arrangement: eps is added to sqrt(v) / sqrt(1 - b2^t)
            p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
            np.testing.assert_allclose(history[t - 1][i], p, rtol=1e-10)
    assert opt.state[params[0]]["step"].item() == 5


def test_first_adam_step_moves_each_weight_by_about_lr(rng):
    p = Tensor(rng.standard_normal(6), requires_grad=True)
    before = p.numpy().copy()
    p.grad = rng.standard_normal(6) * 100
    optim.Adam([p], lr=0.01).step()
    np.testing.assert_allclose(np.abs(before - p.numpy()), 0.01, rtol=1e-6)


def test_float32_parameters_stay_float32_and_are_updated_in_place(rng):
    p = Tensor(rng.standard_normal(4), dtype=np.float32, requires_grad=True)
    array = p.numpy()
    for opt in (optim.SGD([p], lr=0.1, momentum=0.9), optim.Adam([p])):
        p.grad = np.ones(4, dtype=np.float32)
        opt.step()
        assert p.numpy().dtype == np.float32
        assert p.numpy() is array


def test_parameters_without_grad_are_skipped(rng):
    a, b = (Tensor(rng.standard_normal(3), requires_grad=True) for _ in range(2))
    b_before = b.numpy().copy()
    opt = optim.Adam(p for p in (a, b))  # a generator is fine
    a.grad = np.ones(3)
    opt.step()
    opt.step()
    np.testing.assert_array_equal(b.numpy(), b_before)
    assert opt.state[a]["step"].item() == 2 and b not in opt.state
    b.grad = np.ones(3)
    opt.step()
    assert opt.state[b]["step"].item() == 1  # b's bias correction starts at its own first step


def test_zero_grad_sets_none(rng):
    p = Tensor(rng.standard_normal(3), requires_grad=True)
    p.grad = np.ones(3)
    opt = optim.SGD([p], lr=0.1)
    opt.zero_grad()
    assert p.grad is None


def test_a_step_between_forward_and_backward_makes_that_backward_raise(rng):
    """As PyTorch: the step writes the parameters in place, so a graph that saved them refuses
    to run backward ('modified by an inplace operation'), naming the op; a new forward is fine."""
    x = Tensor(rng.standard_normal((2, 3)))
    w = Tensor(rng.standard_normal((3, 2)), requires_grad=True, name="w")
    b = Tensor(rng.standard_normal(2), requires_grad=True, name="b")
    loss = ((x @ w) * b).sum()
    opt = optim.Adam([w, b], lr=0.1)
    loss.backward(retain_graph=True)
    memory = w.numpy()
    opt.step()
    assert w.numpy() is memory and w._version == 1  # written in place
    with pytest.raises(RuntimeError, match=r"Mul saved its input 1 'b'.*inplace operation"):
        loss.backward()
    opt.zero_grad()
    ((x @ w) * b).sum().backward()  # the usual loop: forward, backward, step
    opt.step()
    assert w._version == 2


def test_training_reduces_a_quadratic(rng):
    target = rng.standard_normal(5)
    for make_opt in (lambda p: optim.SGD(p, lr=0.1, momentum=0.5), lambda p: optim.Adam(p, 0.1)):
        w = Tensor(np.zeros(5), requires_grad=True)
        opt = make_opt([w])
        for _ in range(200):
            opt.zero_grad()
            ((w - target) * (w - target)).sum().backward()
            opt.step()
        np.testing.assert_allclose(w.numpy(), target, atol=1e-3)


def test_argument_errors_are_pytorchs():
    good = Tensor(np.ones(2), requires_grad=True)
    with pytest.raises(TypeError, match=r"can only optimize Tensors, but parameter 1 of group 0"):
        optim.SGD([good, np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor .*made by Mul"):
        optim.Adam([good * 2])
    optim.Adam([Tensor(np.ones(2, dtype=np.int64))])  # accepted, as in PyTorch (never stepped)
    with pytest.raises(TypeError, match="a single Tensor"):
        optim.SGD(good, lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(3, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match="parameter 1 .*same tensor as parameter 0"):
        optim.Adam([good, good])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([good], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([good], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        optim.SGD([good], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="both floats or both Tensors"):
        optim.Adam([good], betas=(0, 0.99))  # (PyTorch refuses the int 0 too)
    with pytest.raises(TypeError, match="in an ordered collection"):
        optim.SGD([{"params": {good}}], lr=0.1)


def test_optimizer_trains_a_module():
    ta.manual_seed(0)
    model = ta.nn.Sequential(ta.nn.Linear(2, 8), ta.nn.ReLU(), ta.nn.Linear(8, 1))
    x = np.random.default_rng(1).standard_normal((64, 2)).astype(np.float32)
    y = Tensor((x[:, :1] * x[:, 1:]).astype(np.float32))
    opt = optim.Adam(model.parameters(), lr=0.02)
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = ta.functional.mse_loss(model(Tensor(x)), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.3 * first


# ------------------------------------------------------------------ PyTorch-style optim
def test_bad_hyperparameters_are_refused_where_pytorch_refuses_them():
    good = Tensor(np.ones(2), requires_grad=True)
    for make in (
        lambda: optim.Adam([good], lr=float("nan")),
        lambda: optim.Adam([good], eps=float("nan")),
        lambda: optim.AdamW([good], weight_decay=float("nan")),
    ):
        with pytest.raises(ValueError, match="Invalid .*: nan"):
            make()
    # SGD checks `lr < 0`, which NaN passes: PyTorch computes, and so do we
    optim.SGD([good], lr=float("nan"), weight_decay=np.nan)
    with pytest.raises(TypeError, match=r"SGD: lr must be a real number, got str '0.1'.*float"):
        optim.SGD([good], lr="0.1")
    with pytest.raises(ValueError, match=r"Adam: betas must be a pair .*\(0.9,\)"):
        optim.Adam([good], betas=(0.9,))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        optim.SGD([good], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.Adam([good], lr=ta.tensor([0.1, 0.2]))
    opt = optim.Adam([{"params": [good], "my_note": "kept"}])  # a key of your own is kept
    assert opt.param_groups[0]["my_note"] == "kept"


def test_frozen_parameters_are_allowed_and_skipped(rng):
    a = Tensor(rng.standard_normal(3), requires_grad=True)
    frozen = Tensor(rng.standard_normal(3))  # requires_grad=False, as after requires_grad_(False)
    before = frozen.numpy().copy()
    opt = optim.AdamW([a, frozen], lr=0.1)
    (a * frozen).sum().backward()
    opt.step()
    np.testing.assert_array_equal(frozen.numpy(), before)
    assert frozen not in opt.state and opt.state[a]["step"].item() == 1


def test_adamw_matches_formula_with_groups(rng):
    params, grads = make(rng, (3, 2), (4,))
    start = [p.numpy().copy() for p in params]
    lr, (b1, b2), eps, wd = 0.01, (0.9, 0.95), 1e-8, 0.1
    groups = [{"params": [params[0]], "weight_decay": wd}, {"params": [params[1]], "lr": 0.05}]
    opt = optim.AdamW(groups, lr=lr, betas=(b1, b2), eps=eps, weight_decay=0.0)
    assert [g["lr"] for g in opt.param_groups] == [lr, 0.05]
    history = run_steps(opt, params, grads)
    for i, (group_lr, group_wd) in enumerate([(lr, wd), (0.05, 0.0)]):
        p, m, v = start[i].copy(), 0.0, 0.0
        for t, step_grads in enumerate(grads, start=1):
            g = step_grads[i]
            p = p * (1 - group_lr * group_wd)  # decoupled: the weights shrink, g is untouched
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            p = p - group_lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
            np.testing.assert_allclose(history[t - 1][i], p, rtol=1e-10)


def test_sgd_nesterov_and_dampening_match_formula(rng):
    params, grads = make(rng, (3,))
    p0 = params[0].numpy().copy()
    opt = optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)
    history = run_steps(opt, params, grads)
    p, buf = p0, None
    for step, step_grads in enumerate(grads):
        g = step_grads[0]
        buf = g.copy() if buf is None else 0.9 * buf + g
        p = p - 0.1 * (g + 0.9 * buf)
        np.testing.assert_allclose(history[step][0], p, rtol=1e-12)
    params, grads = make(rng, (3,))
    p, buf = params[0].numpy().copy(), None
    history = run_steps(optim.SGD(params, lr=0.1, momentum=0.5, dampening=0.3), params, grads)
    for step, step_grads in enumerate(grads):
        g = step_grads[0]
        buf = g.copy() if buf is None else 0.5 * buf + 0.7 * g
        p = p - 0.1 * buf
        np.testing.assert_allclose(history[step][0], p, rtol=1e-12)


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
        lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.01),
        lambda ps: optim.AdamW([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.002}]),
    ],
    ids=["SGD", "Adam", "AdamW-groups"],
)
def test_state_dict_round_trip_through_pickle_is_bit_for_bit(rng, make_opt):
    import pickle

    params, grads = make(rng, (3, 2), (4,))
    copies = [Tensor(p.numpy(), requires_grad=True) for p in params]
    opt = make_opt(params)
    run_steps(opt, params, grads[:3])
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    assert set(saved["state"]) == {0, 1}
    assert [i for g in saved["param_groups"] for i in g["params"]] == [0, 1]
    for p, c in zip(params, copies):
        c.data = p.numpy().copy()
    resumed = make_opt(copies)
    resumed.load_state_dict(saved)
    after = run_steps(opt, params, grads[3:])
    after_resumed = run_steps(resumed, copies, grads[3:])
    for ours, theirs in zip(after, after_resumed):
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)
    # the checkpoint is a copy: stepping on did not change it
    assert saved["state"][0] is not resumed.state_dict()["state"][0]


def test_load_state_dict_checks_everything_first(rng):
    params, grads = make(rng, (3, 2), (4,))
    opt = optim.Adam(params)
    run_steps(opt, params, grads[:1])
    saved = copy.deepcopy(opt.state_dict())  # (state_dict() holds the live state)
    saved["state"][1]["exp_avg"] = np.zeros(5)  # wrong shape in the last entry
    saved["param_groups"][0]["lr"] = 0.5
    before = opt.state_dict()
    with pytest.raises(ValueError, match=r"state\[1\]\['exp_avg'\] has shape \(5,\)"):
        opt.load_state_dict(saved)
    assert opt.param_groups[0]["lr"] == before["param_groups"][0]["lr"]
    assert opt.state[params[1]]["exp_avg"] is before["state"][1]["exp_avg"]
    with pytest.raises(ValueError, match=r"different number of parameter groups \(1\) than"):
        optim.Adam([{"params": [params[0]]}, {"params": [params[1]]}]).load_state_dict(before)


def test_zero_grad_to_zeros_in_place_and_repr(rng):
    p = Tensor(rng.standard_normal(3), requires_grad=True)
    p.grad = np.ones(3)
    grad = p.grad
    opt = optim.SGD([p], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad  # the same tensor, zeroed in place (PyTorch's zero_())
    np.testing.assert_array_equal(p.grad, np.zeros(3))
    assert repr(opt).splitlines()[:3] == ["SGD (", "Parameter Group 0", "    dampening: 0"]
    assert "    lr: 0.1" in repr(opt).splitlines()


@pytest.mark.filterwarnings("ignore:Detected call of")
def test_schedulers_follow_pytorch_closed_forms():
    p = Tensor(np.ones(2), requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    step = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    assert not hasattr(optim, "StepLR")  # as torch.optim: only under optim.lr_scheduler
    seen = []
    for _ in range(5):
        seen.append(step.get_last_lr()[0])
        opt.step()
        step.step()
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.25]
    opt = optim.SGD([p], lr=1.0)
    cosine = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.1)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        cosine.step()
    np.testing.assert_allclose(lrs, [0.1 + 0.9 * (1 + np.cos(np.pi * t / 4)) / 2 for t in range(5)])
    opt = optim.Adam([p], lr=0.1)
    warmup = optim.lr_scheduler.LambdaLR(opt, lambda epoch: min(1.0, (epoch + 1) / 3))
    lrs = []
    for _ in range(4):
        lrs.append(opt.param_groups[0]["lr"])
        warmup.step()
    np.testing.assert_allclose(lrs, [0.1 / 3, 0.2 / 3, 0.1, 0.1])


def test_clip_grad_norm_scales_all_gradients_together(rng):
    a, b = Tensor(np.zeros(3), requires_grad=True), Tensor(np.zeros(4), requires_grad=True)
    a.grad, b.grad = np.full(3, 3.0), np.full(4, 4.0)
    total = ta.nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    norm = np.sqrt(9 * 3 + 16 * 4)
    assert abs(total.item() - norm) < 1e-12
    joint = np.sqrt(np.sum(a.grad**2) + np.sum(b.grad**2))
    np.testing.assert_allclose(joint, 1.0, rtol=1e-5)
    a.grad = np.full(3, 0.1)
    ta.nn.utils.clip_grad_norm_(a, max_norm=1.0)
    np.testing.assert_array_equal(a.grad, np.full(3, 0.1))  # below the limit: unchanged


def test_parameters_joining_later_keep_their_own_bias_correction(rng):
    a, b = leaf = [Tensor(rng.standard_normal(s), requires_grad=True) for s in ((2, 3), (4,))]
    start = [p.numpy().copy() for p in leaf]
    grads = [[rng.standard_normal(p.shape) for p in leaf] for _ in range(4)]
    opt = optim.Adam(leaf, lr=0.1, betas=(0.8, 0.9))
    for step, (ga, gb) in enumerate(grads):
        a.grad = ga
        b.grad = gb if step >= 2 else None  # b joins at the third step: a new flat layout
        opt.step()
    for i, first in ((0, 0), (1, 2)):
        p, m, v = start[i].copy(), 0.0, 0.0
        for t, step_grads in enumerate(grads[first:], start=1):
            g = step_grads[i]
            m = 0.8 * m + 0.2 * g
            v = 0.9 * v + 0.1 * g * g
            p = p - 0.1 / (1 - 0.8**t) * m / (np.sqrt(v) / np.sqrt(1 - 0.9**t) + 1e-8)
        np.testing.assert_allclose(leaf[i].numpy(), p, rtol=1e-12)
    assert opt.state[a]["step"].item() == 4 and opt.state[b]["step"].item() == 2
    np.testing.assert_array_equal(opt.state_dict()["state"][0]["exp_avg"], opt.state[a]["exp_avg"])


def test_plain_sgd_keeps_no_buffers(rng):
    p = Tensor(rng.standard_normal(3), requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    p.grad = np.ones(3)
    opt.step()
    assert opt.state_dict()["state"] == {} or opt.state_dict()["state"][0] == {}


def test_turning_momentum_on_later_starts_a_buffer(rng):
    p = Tensor(rng.standard_normal(3), requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    p.grad = np.ones(3)
    opt.step()
    opt.param_groups[0]["momentum"] = 0.5
    before = p.numpy().copy()
    opt.step()  # first step with momentum: buf = g
    np.testing.assert_allclose(p.numpy(), before - 0.1)
    opt.step()  # buf = 0.5 * 1 + 1
    np.testing.assert_allclose(p.numpy(), before - 0.1 - 0.15)
