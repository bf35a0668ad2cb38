"""optim against PyTorch itself (skipped without it): the same steps (SGD bit for bit, Adam to
the last bit or so), the same state_dict layout and types, checkpoints across both libraries
both ways, the same exceptions for bad arguments, the same lr schedules, and nn.utils' helpers.
"""

import io

import numpy as np
import optim_scenarios as S
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as ta  # noqa: E402


def describe(x):
    """The layout of a state_dict: containers, key order, types, tensors' dtypes and shapes."""
    if isinstance(x, dict):
        return {k: describe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [describe(v) for v in x]
    if torch.is_tensor(x) or isinstance(x, ta.Tensor):
        return "Tensor", str(x.dtype).replace("torch.", ""), tuple(x.shape)
    return type(x).__name__, x


def both(make):
    return make(torch), make(ta)


def ulps(a, b):
    return float(np.max(np.abs(a - b)) / np.spacing(np.max(np.abs(b))))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    "name, options",
    [
        ("SGD", dict(lr=0.03, momentum=0.9, dampening=0.1, weight_decay=0.01)),
        ("SGD", dict(lr=0.03, momentum=0.8, nesterov=True, maximize=True)),
        ("Adam", dict(lr=3e-3, weight_decay=0.01, amsgrad=True)),
        ("AdamW", dict(lr=3e-3, betas=(0.8, 0.95), weight_decay=0.1)),
        ("Adam", dict(lr="tensor", betas=(0.7, 0.9))),
        ("RMSprop", dict(lr=1e-3, momentum=0.5, centered=True, weight_decay=0.01)),
        ("Adagrad", dict(lr=0.05, lr_decay=0.1, initial_accumulator_value=0.5)),
    ],
)
def test_float32_steps_match_pytorch_with_gradients_coming_and_going(name, options, seed):
    rng = np.random.default_rng(seed)
    shapes = [tuple(rng.integers(1, 6, size=rng.integers(1, 4))) for _ in range(4)]
    start = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    plan = [[rng.standard_normal(s).astype(np.float32) if rng.random() < 0.8 else None
             for s in shapes] for _ in range(6)]  # fmt: skip

    def run(lib):
        ps = [lib.nn.Parameter(lib.from_numpy(a.copy())) for a in start]
        kw = dict(options, lr=lib.tensor(0.01)) if options.get("lr") == "tensor" else options
        opt = getattr(lib.optim, name)([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.002}], **kw)
        for grads in plan:
            for p, g in zip(ps, grads):
                p.grad = None if g is None else lib.from_numpy(g.copy())
            opt.step()
        states = [{k: v.numpy().copy() for k, v in opt.state[p].items()} for p in ps]
        return [p.detach().numpy().copy() for p in ps], states

    (theirs, their_states), (ours, our_states) = both(run)
    # SGD bit for bit; Adam's last-bit differences (PyTorch's fused multiply-adds, MKL's sqrt)
    # may add up over the 6 steps by a few units in the last place
    for a, b in zip(ours, theirs):
        if name == "SGD":
            np.testing.assert_array_equal(a, b)
        else:
            assert ulps(a, b) <= 3
    for mine, their in zip(our_states, their_states):
        assert list(mine) == list(their)
        for key in their:
            if name == "SGD" or key == "step":
                np.testing.assert_array_equal(mine[key], their[key])
            else:  # (a buffer that grew and shrank again carries its larger past's rounding)
                np.testing.assert_allclose(mine[key], their[key], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_dict_layout_and_types_are_pytorchs(name):
    def run(lib):
        rng = np.random.default_rng(3)
        ps = [
            (f"w{i}", lib.nn.Parameter(lib.tensor(rng.standard_normal((2, i + 1)))))
            for i in range(3)
        ]
        kw = {"SGD": dict(momentum=0.9), "RMSprop": dict(momentum=0.9, centered=True)}.get(
            name, dict(amsgrad=True) if "Adam" in name else {}
        )
        opt = getattr(lib.optim, name)([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.5}], **kw)
        layouts = [describe(opt.state_dict())]
        for _, p in ps[1:]:
            p.grad = lib.ones_like(p)
        opt.step()
        layouts.append(describe(opt.state_dict()))
        return layouts

    assert run(ta) == run(torch)


@pytest.mark.parametrize("kind", ["adamw", "sgd"])
def test_checkpoints_cross_both_ways_and_resume_alike(kind):
    """PyTorch's state into ours (through a file), ours into PyTorch: the next steps agree."""

    def trained(lib):
        params, opt = S.checkpoint_setup(lib, kind)
        for step in range(3):
            for p, g in zip(params, S.checkpoint_grads(step)):
                p.grad = lib.tensor(g)
            opt.step()
        return params, opt

    def resume(lib, params, opt, steps=(3, 4)):
        for step in steps:
            for p, g in zip(params, S.checkpoint_grads(step)):
                p.grad = lib.tensor(g)
            opt.step()
        return [p.detach().numpy().copy() for p in params]

    for source, target in ((torch, ta), (ta, torch)):
        params, opt = trained(source)
        buffer = io.BytesIO()
        source.save({"optimizer": opt.state_dict(), "params": [p.detach() for p in params]}, buffer)
        buffer.seek(0)
        checkpoint = target.load(buffer, weights_only=True)
        new_params, new_opt = S.checkpoint_setup(target, kind)
        with target.no_grad():
            for p, saved in zip(new_params, checkpoint["params"]):
                p.copy_(saved)
        new_opt.load_state_dict(checkpoint["optimizer"])
        assert describe(new_opt.state_dict()) == describe(opt.state_dict())
        expected, got = resume(source, params, opt), resume(target, new_params, new_opt)
        for a, b in zip(got, expected):
            assert ulps(a, b) <= (2 if kind == "adamw" else 0)


BAD = [
    ("SGD", dict(lr=-0.1)),
    ("SGD", dict(lr=0.1, momentum=-1)),
    ("SGD", dict(lr=0.1, weight_decay=-1)),
    ("SGD", dict(lr=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, nesterov=True, momentum=0.9, dampening=0.1)),
    ("SGD", dict(lr=0.1, fused=True, foreach=True)),
    ("Adam", dict(lr=-1e-3)),
    ("Adam", dict(lr=float("nan"))),
    ("Adam", dict(eps=-1.0)),
    ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(betas=(0.9, 1))),
    ("AdamW", dict(weight_decay=-0.1)),
    ("AdamW", dict(fused=True, differentiable=True)),
]


@pytest.mark.parametrize("name, options", BAD, ids=[S.scenario_id(*c) for c in BAD])
def test_bad_arguments_raise_pytorchs_exception_class(name, options):
    errors = []
    for lib in (torch, ta):
        p = lib.nn.Parameter(lib.zeros(2))
        with pytest.raises(Exception) as caught:
            getattr(lib.optim, name)([p], **options)
        errors.append(caught.value)
    theirs, ours = errors
    assert isinstance(ours, type(theirs)), (type(theirs), type(ours), ours)


def test_param_group_errors_raise_pytorchs_exception_class():
    cases = [
        lambda lib, p: lib.optim.SGD([p, p * 2], lr=0.1),  # not a leaf
        lambda lib, p: lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
        lambda lib, p: lib.optim.SGD([{"params": {p}}], lr=0.1),
        lambda lib, p: lib.optim.SGD([p, "w"], lr=0.1),
        lambda lib, p: lib.optim.SGD([], lr=0.1),
        lambda lib, p: lib.optim.SGD(p, lr=0.1),
        lambda lib, p: lib.optim.SGD([("a", p), lib.nn.Parameter(lib.zeros(1))], lr=0.1),
    ]
    for case in cases:
        errors = []
        for lib in (torch, ta):
            with pytest.raises(Exception) as caught:
                case(lib, lib.nn.Parameter(lib.zeros(2)))
            errors.append(caught.value)
        assert isinstance(errors[1], type(errors[0])), (errors[0], errors[1])


@pytest.mark.parametrize("name", S.SCHEDULER_SCENARIOS)
def test_schedules_match_the_installed_pytorch(name):
    assert S.run_scheduler(ta, name) == S.run_scheduler(torch, name)
    if name in S.MANUAL:
        assert S.run_scheduler(ta, name, True) == S.run_scheduler(torch, name, True)


def test_nn_utils_parameter_helpers_match_pytorch():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s).astype(np.float32) * 3 for s in ((2, 3), (4,))]
    grads = [rng.standard_normal(a.shape).astype(np.float32) * 3 for a in arrays]
    grads[0][0, 0] = np.nan

    def run(lib):
        ps = [lib.nn.Parameter(lib.tensor(a)) for a in arrays]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        lib.nn.utils.clip_grad_value_(ps, 1.5)
        vec = lib.nn.utils.parameters_to_vector(ps)
        out = [vec.detach().numpy().copy()] + [p.grad.numpy().copy() for p in ps]
        lib.nn.utils.vector_to_parameters(vec.detach() * 2, ps)
        return out + [p.detach().numpy().copy() for p in ps]

    for ours, theirs in zip(run(ta), run(torch)):
        np.testing.assert_array_equal(ours, theirs)
