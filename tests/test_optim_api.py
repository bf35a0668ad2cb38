"""optim's PyTorch API around the formulas: step(closure), zero_grad, add_param_group and named
parameters, amsgrad / maximize / the accepted flags, a Tensor lr, the state as live Tensors
over the flat buffers, load_state_dict of every form, pickling; the schedulers' bookkeeping
(initial_lr, warnings, resuming, their state_dict), and the module names PyTorch code imports.
"""

import copy
import importlib
import pickle
import warnings

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor, optim
from tinygrad_attn.optim import lr_scheduler


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def params(rng, *shapes, dtype=np.float32):
    return [ta.nn.Parameter(ta.tensor(rng.standard_normal(s).astype(dtype))) for s in shapes]


def set_grads(ps, rng):
    for p in ps:
        p.grad = ta.tensor(rng.standard_normal(p.shape).astype(p.dtype))


# ----------------------------------------------------------------------------- step
def test_step_calls_the_closure_with_grad_enabled_and_returns_its_loss(rng):
    w = params(rng, (3,))[0]
    opt = optim.SGD([w], lr=0.1)
    calls = []

    def closure():
        calls.append(ta.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    before = w.numpy().copy()
    with ta.no_grad():  # (PyTorch's closure runs under enable_grad even so)
        loss = opt.step(closure)
    assert calls == [True] and isinstance(loss, Tensor)
    np.testing.assert_allclose(w.numpy(), before - np.float32(0.1) * 2 * before, rtol=1e-6)
    assert optim.Adam([w]).step() is None


def test_add_param_group_keeps_the_dict_and_fills_defaults(rng):
    a, b, c = params(rng, (2,), (3,), (4,))
    opt = optim.Adam([a], lr=0.01, weight_decay=0.1)
    group = {"params": b, "lr": 0.5}
    opt.add_param_group(group)
    assert opt.param_groups[1] is group and group["params"] == [b]
    assert group["weight_decay"] == 0.1 and group["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [c, a]})
    with pytest.raises(TypeError, match="must be a dict"):
        opt.add_param_group([c])
    with pytest.raises(KeyError, match="no 'params' entry"):
        opt.add_param_group({"lr": 1.0})
    set_grads([a, b], rng)
    opt.step()
    assert opt.state_dict()["param_groups"][1]["params"] == [1]


def test_named_parameters_keep_their_names_as_pytorch(rng):
    model = ta.nn.Linear(3, 2)
    opt = optim.AdamW(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == [model.weight, model.bias]
    saved = opt.state_dict()["param_groups"][0]
    assert list(saved)[0] == "param_names" and list(saved)[-1] == "params"
    with pytest.raises(ValueError, match="with names or all without"):
        opt.add_param_group({"params": [ta.nn.Parameter(ta.zeros(2))]})


def test_amsgrad_keeps_the_running_maximum(rng):
    p = params(rng, (5,), dtype=np.float64)[0]
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    big, small = np.full(5, 3.0), np.full(5, 0.01)
    for g in (big, small, small):
        p.grad = ta.tensor(g)
        opt.step()
    state = opt.state[p]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    v = 0.999 * (0.999 * 0.001 * 9 + 0.001 * 1e-4) + 0.001 * 1e-4
    np.testing.assert_allclose(state["exp_avg_sq"].numpy(), v, rtol=1e-12)
    np.testing.assert_allclose(state["max_exp_avg_sq"].numpy(), 0.001 * 9, rtol=1e-12)


@pytest.mark.parametrize(
    "make", [lambda ps, **k: optim.SGD(ps, lr=0.1, momentum=0.9, **k), optim.Adam, optim.AdamW]
)
def test_maximize_is_minimizing_the_negated_gradient(rng, make):
    ps = params(rng, (4,), (2, 3), dtype=np.float64)
    twins = [ta.nn.Parameter(p.detach().clone()) for p in ps]
    up, down = make(ps, maximize=True), make(twins)
    for _ in range(3):
        set_grads(ps, rng)
        for p, q in zip(ps, twins):
            q.grad = -p.grad
        up.step()
        down.step()
    for p, q in zip(ps, twins):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_foreach_fused_capturable_are_accepted_differentiable_is_refused(rng):
    ps = params(rng, (3,))
    for options in (dict(foreach=True), dict(fused=True), dict(capturable=True)):
        assert optim.Adam(ps, **options).param_groups[0][next(iter(options))] is True
    assert optim.SGD(ps, fused=False).defaults["fused"] is False
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported") as e:
        optim.AdamW(ps, differentiable=True)
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.SGD(ps, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        optim.Adam(ps, fused=True, differentiable=True)
    with pytest.raises(ValueError, match="lr as a Tensor is not supported"):
        optim.Adam(ps, lr=ta.tensor(0.1), foreach=True)


def test_a_tensor_lr_is_read_each_step_and_filled_by_schedulers(rng):
    ps = params(rng, (3,))
    lr = ta.tensor(0.1)
    opt = optim.Adam(ps, lr=lr)
    scheduler = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    set_grads(ps, rng)
    before = ps[0].numpy().copy()
    opt.step()
    np.testing.assert_allclose(np.abs(ps[0].numpy() - before), 0.1, rtol=1e-5)
    scheduler.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)
    assert isinstance(scheduler.get_last_lr()[0], Tensor)
    assert opt.param_groups[0]["initial_lr"] is not lr  # (a clone, as PyTorch)


# ----------------------------------------------------------------------------- state
def test_state_holds_tensors_over_the_flat_buffers(rng):
    ps = params(rng, (2, 3), (4,))
    opt = optim.Adam(ps, lr=0.1)
    set_grads(ps, rng)
    opt.step()
    state = opt.state[ps[0]]
    assert type(state["exp_avg"]) is Tensor and state["exp_avg"].shape == (2, 3)
    assert state["step"].shape == () and state["step"].dtype == np.float32
    flat = opt._flats[(0, np.dtype(np.float32))]
    assert np.shares_memory(state["exp_avg"].numpy(), flat.buffers["exp_avg"])
    with ta.no_grad():
        state["exp_avg"].zero_()  # in place: the next step starts from zero momentum
    m = state["exp_avg"]
    set_grads(ps, rng)
    g = ps[0].grad.numpy()
    opt.step()
    assert opt.state[ps[0]]["exp_avg"] is m  # the same Tensor, updated in place
    np.testing.assert_array_equal(m.numpy(), np.float32(0.1) * g)


def test_state_dict_is_live_and_deepcopy_is_a_snapshot(rng):
    ps = params(rng, (3,))
    opt = optim.SGD(ps, lr=0.1, momentum=0.9)
    set_grads(ps, rng)
    opt.step()
    live, snapshot = opt.state_dict(), copy.deepcopy(opt.state_dict())
    assert live["state"][0] is opt.state[ps[0]]  # as PyTorch: the entries themselves
    opt.step()
    assert not np.array_equal(
        live["state"][0]["momentum_buffer"], snapshot["state"][0]["momentum_buffer"]
    )
    np.testing.assert_array_equal(
        live["state"][0]["momentum_buffer"], opt.state[ps[0]]["momentum_buffer"]
    )


def test_a_new_layout_keeps_the_state_tensors_and_their_values(rng):
    a, b = params(rng, (3,), (2,))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = ta.tensor(np.ones(3, np.float32))
    opt.step()
    m, step = opt.state[a]["exp_avg"], opt.state[a]["step"]
    values = m.numpy().copy()
    set_grads([a, b], rng)  # b joins: a new flat layout
    opt.step()
    assert opt.state[a]["exp_avg"] is m and opt.state[a]["step"] is step
    assert step.item() == 2 and opt.state[b]["step"].item() == 1
    assert not np.array_equal(m.numpy(), values)  # and it went on from the old values
    a.grad = None  # a leaves the layout: its state keeps its values, in memory of its own
    kept = m.numpy().copy()
    opt.step()
    np.testing.assert_array_equal(m.numpy(), kept)


def test_a_replaced_state_entry_is_what_the_next_step_uses(rng):
    p = params(rng, (4,))[0]
    opt = optim.SGD([p], lr=1.0, momentum=0.5)
    p.grad = ta.tensor(np.ones(4, np.float32))
    opt.step()
    opt.state[p]["momentum_buffer"] = ta.tensor(np.full(4, 10.0, np.float32))
    before = p.numpy().copy()
    opt.step()  # buf = 0.5 * 10 + 1
    np.testing.assert_array_equal(p.numpy(), before - 6.0)


def test_load_state_dict_takes_the_older_form_and_copies(rng):
    ps = params(rng, (3,), (2,))
    old = {  # what this package's optimizer wrote before: arrays, int steps, fewer options
        "state": {0: {"step": 2, "exp_avg": np.ones(3), "exp_avg_sq": np.ones(3)}},
        "param_groups": [{"lr": 0.01, "betas": (0.9, 0.99), "eps": 1e-8, "weight_decay": 0.0,
                          "params": [0, 1]}],
    }  # fmt: skip
    opt = optim.Adam(ps)
    opt.load_state_dict(old)
    state = opt.state[ps[0]]
    assert state["step"].dtype == np.float32 and state["step"].item() == 2.0
    assert state["exp_avg"].dtype == np.float32  # cast to the parameter's dtype
    assert opt.param_groups[0]["amsgrad"] is False  # options the checkpoint lacks: defaults
    old["state"][0]["exp_avg"][:] = 5  # a copy was taken
    assert state["exp_avg"].numpy()[0] == 1
    set_grads(ps, rng)
    opt.step()
    assert state["step"].item() == 3.0
    with pytest.raises(KeyError, match="keys 'state' and 'param_groups'"):
        opt.load_state_dict({"state": {}})
    with pytest.raises(TypeError, match="expected a dict"):
        opt.load_state_dict([])


def test_an_optimizer_pickles_after_a_scheduler_wrapped_its_step(rng):
    ps = params(rng, (3,))
    opt = optim.AdamW(ps)
    lr_scheduler.StepLR(opt, 2)
    set_grads(ps, rng)
    opt.step()
    again = pickle.loads(pickle.dumps(opt))
    assert again.param_groups[0]["initial_lr"] == 1e-3
    assert list(again.state.values())[0]["step"].item() == 1


# ------------------------------------------------------------------------------ schedulers
def test_schedulers_are_pytorchs_module_and_names():
    module = importlib.import_module("tinygrad_attn.optim.lr_scheduler")
    assert module is lr_scheduler and ta.optim.lr_scheduler.StepLR is lr_scheduler.StepLR
    for name in module.__all__:
        assert issubclass(getattr(module, name), module.LRScheduler)
    assert issubclass(module._LRScheduler, module.LRScheduler)


def test_initial_lr_and_resuming_as_pytorch(rng):
    opt = optim.SGD(params(rng, (2,)), lr=0.5)
    with pytest.raises(KeyError, match="'initial_lr' is not specified in param_groups\\[0\\]"):
        lr_scheduler.StepLR(opt, 3, last_epoch=4)
    lr_scheduler.StepLR(opt, 3)
    assert opt.param_groups[0]["initial_lr"] == 0.5
    opt.param_groups[0]["lr"] = 0.1
    resumed = lr_scheduler.ExponentialLR(opt, 0.5, last_epoch=4)  # initial_lr is kept
    assert resumed.base_lrs == [0.5] and resumed.last_epoch == 5
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], 3)


def test_scheduler_warnings_as_pytorch(rng):
    opt = optim.SGD(params(rng, (2,)), lr=0.5)
    scheduler = lr_scheduler.StepLR(opt, 3)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        scheduler.step()
    with pytest.warns(UserWarning, match="use `get_last_lr\\(\\)`"):
        scheduler.get_lr()
    with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)`"):
        scheduler.step(6)
    assert scheduler.get_last_lr() == [0.5 * 0.1**2]
    opt = optim.SGD(params(rng, (2,)), lr=0.5)
    scheduler = lr_scheduler.StepLR(opt, 3)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler.step()  # the right order: no warning


def test_scheduler_state_dict_round_trip(rng):
    def make():
        opt = optim.SGD(params(np.random.default_rng(0), (2,)), lr=1.0)
        first = lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=4)
        return opt, lr_scheduler.SequentialLR(
            opt, [first, lr_scheduler.CosineAnnealingLR(opt, 6)], milestones=[4]
        )

    opt, scheduler = make()
    for _ in range(5):
        opt.step()
        scheduler.step()
    saved = pickle.loads(pickle.dumps(scheduler.state_dict()))
    assert list(saved) == ["_milestones", "last_epoch", "_last_lr", "_schedulers"]
    opt2, resumed = make()
    opt2.load_state_dict(opt.state_dict())
    resumed.load_state_dict(saved)
    for _ in range(4):
        for o, s in ((opt, scheduler), (opt2, resumed)):
            o.step()
            s.step()
        assert resumed.get_last_lr() == scheduler.get_last_lr()


def test_combined_schedulers_check_their_parts(rng):
    opt, other = (optim.SGD(params(rng, (2,)), lr=0.5) for _ in range(2))
    step = lr_scheduler.StepLR(opt, 3)
    with pytest.raises(ValueError, match="one milestone fewer than schedulers"):
        lr_scheduler.SequentialLR(opt, [step, lr_scheduler.StepLR(opt, 2)], milestones=[])
    with pytest.raises(ValueError, match="same optimizer"):
        lr_scheduler.ChainedScheduler([step, lr_scheduler.StepLR(other, 2)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        lr_scheduler.ChainedScheduler([step, lr_scheduler.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="at least one scheduler"):
        lr_scheduler.SequentialLR(opt, [], milestones=[])


def test_one_cycle_refuses_to_step_past_total_steps(rng):
    opt = optim.Adam(params(rng, (2,)))
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    group = opt.param_groups[0]
    assert group["max_momentum"] == 0.95 and group["betas"][0] < 0.9  # cycles Adam's beta1
    for _ in range(3):
        opt.step()
        scheduler.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        scheduler.step()
    with pytest.raises(ValueError, match="either total_steps OR"):
        lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="support momentum or beta1"):
        lr_scheduler.CyclicLR(optim.Optimizer(params(rng, (2,)), {"lr": 0.1}), 0.01, 0.1)


def test_adagrad_makes_its_state_at_construction_as_pytorch(rng):
    a, b = params(rng, (3,), (2,), dtype=np.float64)
    opt = optim.Adagrad([a], lr=0.1, initial_accumulator_value=0.5)
    assert list(opt.state_dict()["state"][0]) == ["step", "sum"]
    np.testing.assert_array_equal(opt.state[a]["sum"].numpy(), [0.5] * 3)
    opt.add_param_group({"params": [b], "initial_accumulator_value": 2.0})
    set_grads([a, b], rng)
    g = b.grad.numpy().copy()
    opt.step()  # b's state starts at the step, from the optimizer's default (as PyTorch)
    np.testing.assert_allclose(opt.state[b]["sum"].numpy(), 0.5 + g * g)
    assert opt.state[a]["step"].item() == 1.0


def test_rmsprop_keeps_pytorchs_state_names(rng):
    p = params(rng, (3,))[0]
    opt = optim.RMSprop([p], momentum=0.9, centered=True)
    set_grads([p], rng)
    opt.step()
    assert list(opt.state[p]) == ["step", "square_avg", "momentum_buffer", "grad_avg"]
    with pytest.raises(ValueError, match="Invalid alpha value: -1"):
        optim.RMSprop([p], alpha=-1)
