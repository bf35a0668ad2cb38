"""Stepping through autodiff: BackwardStep records, explain(), anomaly mode, tracing."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor, debug, state
from tinygrad_attn.engine import topological_order

HERE = os.path.basename(__file__)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def attention_head(seed=0, tokens=4, width=3):
    """A tiny self-attention head and its loss, rebuilt identically from `seed`."""
    r = np.random.default_rng(seed)
    x = Tensor(r.standard_normal((tokens, width)), name="x")
    wq = Tensor(r.standard_normal((width, width)), requires_grad=True, name="wq")
    wk = Tensor(r.standard_normal((width, width)), requires_grad=True, name="wk")
    wv = Tensor(r.standard_normal((width, width)), requires_grad=True, name="wv")
    scores = (x @ wq) @ (x @ wk).T / np.sqrt(width)
    scores.name = "scores"
    weights = scores.softmax(axis=-1)
    weights.name = "weights"
    out = weights @ (x @ wv)
    loss = (out * out).mean()
    return (wq, wk, wv), loss


def next_line() -> int:
    """The line number after the caller's line (where the op under test is written)."""
    return sys._getframe(1).f_lineno + 1


# ------------------------------------------------------------------------ frame depth
def test_frames_from_backward_into_a_custom_backward_at_most_three():
    seen = {}

    class Probe(ta.Function):
        """out = a;  da = dout"""

        @staticmethod
        def forward(ctx, a):
            return a.copy()

        @staticmethod
        def backward(ctx, grad_out):
            frame, frames = sys._getframe(), 0
            while frame.f_code is not test_code:
                frame, frames = frame.f_back, frames + 1
            seen["frames"] = frames  # Probe.backward and everything between it and the test
            return (grad_out,)

    test_code = sys._getframe().f_code
    x = Tensor([1.0, 2.0], requires_grad=True)
    Probe.apply(x).sum().backward()
    assert 1 <= seen["frames"] <= 3


def test_frames_from_backward_into_softmax_backward_measured_with_setprofile(rng):
    softmax_backward = ta.ops.softmax.Softmax.backward.__code__
    test_code = sys._getframe().f_code
    depths = []

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code is softmax_backward:
            n = 0
            while frame.f_code is not test_code:
                frame, n = frame.f_back, n + 1
            depths.append(n)

    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    loss = x.softmax(axis=-1).sum()
    sys.setprofile(profiler)
    try:
        loss.backward()
    finally:
        sys.setprofile(None)
    assert depths and max(depths) <= 3


# ----------------------------------------------------------------------- step records
def test_steps_run_in_reverse_topological_order_with_consecutive_indices():
    _, loss = attention_head()
    expected = [node.name for node in topological_order(loss.grad_fn)]
    steps = list(loss.backward_steps())
    assert [s.op for s in steps] == expected
    assert [s.index for s in steps] == list(range(len(steps)))
    assert steps[0].op == "Mean" and "Softmax" in [s.op for s in steps]


def test_index_counts_steps_when_a_node_gets_no_gradient():
    class Ignore(ta.Function):
        """out = a + b;  da = dout,  db = nothing (deliberately)"""

        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out, None

    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([3.0, 4.0], requires_grad=True)
    loss = Ignore.apply(a, b.exp()).sum()  # Exp's node receives no gradient: no step for it
    steps = list(loss.backward_steps())
    assert [s.op for s in steps] == ["Sum", "Ignore"]
    assert [s.index for s in steps] == [0, 1]
    assert b.grad is None


def test_step_fields_and_gradients_equal_plain_backward():
    params, loss = attention_head(seed=3)
    loss.backward()
    expected = [p.grad.numpy().copy() for p in params]

    params, loss = attention_head(seed=3)
    summed = {id(p): np.zeros_like(p.numpy()) for p in params}
    for step in loss.backward_steps():
        assert step.node is step.output.grad_fn
        assert step.grad_output.shape == step.output.shape
        assert len(step.inputs) == len(step.grad_inputs)
        for tensor, grad in zip(step.inputs, step.grad_inputs):
            if grad is not None:
                assert grad.shape == tensor.shape  # already summed to the input's shape
            if id(tensor) in summed and grad is not None:
                summed[id(tensor)] += grad
    for p, want in zip(params, expected):
        np.testing.assert_array_equal(p.grad, want)
        np.testing.assert_allclose(summed[id(p)], want, rtol=1e-12)


def test_leaf_grads_reflect_every_step_yielded_so_far():
    params, loss = attention_head(seed=1)
    so_far = {id(p): None for p in params}
    checked = 0
    for step in loss.backward_steps():
        for tensor, grad in zip(step.inputs, step.grad_inputs):
            if id(tensor) in so_far and grad is not None:
                previous = so_far[id(tensor)]
                so_far[id(tensor)] = grad.copy() if previous is None else previous + grad
        for p in params:  # read while the step is being looked at
            if so_far[id(p)] is None:
                assert p.grad is None
            else:
                np.testing.assert_array_equal(p.grad, so_far[id(p)])
                checked += 1
    assert checked > 0


def test_a_steps_arrays_are_alive_and_its_node_unreleased_until_the_pass_moves_on():
    _, loss = attention_head()
    nodes = []
    for step in loss.backward_steps():
        assert isinstance(step.grad_output, np.ndarray)
        assert not step.node.released
        assert step.node.saved_tensors is not None  # still readable while we look at it
        nodes.append(step.node)
    assert all(node.released for node in nodes)


def test_stopping_early_leaves_the_rest_unpropagated_and_the_graph_intact():
    (wq, wk, wv), loss = attention_head(seed=2)
    nodes = topological_order(loss.grad_fn)
    steps = loss.backward_steps()
    first = next(steps)
    steps.close()
    assert first.op == "Mean"
    assert wq.grad is None and wk.grad is None and wv.grad is None
    assert not any(node.released for node in nodes)
    loss.backward()  # the graph is as it was: a full pass still runs
    assert wq.grad is not None


def test_step_repr_is_one_line_with_op_names_shapes_and_norms(rng):
    x = Tensor(rng.standard_normal((2, 3)), requires_grad=True, name="x")
    y = x.softmax(axis=-1)
    y.name = "weights"
    loss = (y * y).sum()
    steps = {s.op: s for s in loss.backward_steps()}
    text = repr(steps["Softmax"])
    assert "\n" not in text
    assert text.startswith(f"step {steps['Softmax'].index}: Softmax -> weights (2, 3)")
    grad_out_norm = np.linalg.norm(steps["Softmax"].grad_output)
    grad_x_norm = np.linalg.norm(steps["Softmax"].grad_inputs[0])
    assert f"|grad_out|={grad_out_norm:.3g}" in text
    assert f"x (2, 3) |grad|={grad_x_norm:.3g}" in text
    assert str(steps["Softmax"]) == text


def test_explain_shows_formula_params_output_and_each_gradient(rng):
    x = Tensor(rng.standard_normal((2, 3)), requires_grad=True, name="x")
    y = x.softmax(axis=1)
    y.name = "weights"
    c = Tensor(np.arange(6.0).reshape(2, 3), name="c")
    loss = (y * c).sum()
    for step in loss.backward_steps():
        if step.op == "Softmax":
            text = step.explain()
            grad_x = step.grad_inputs[0].copy()
            grad_out = step.grad_output.copy()
        if step.op == "Mul":
            mul_text = step.explain()
    assert text.splitlines()[0] == "step 2: Softmax.backward"
    assert "y = softmax(x);  dx = y * (dy - sum(dy * y))" in text
    assert "axis=1" in text
    assert "output    weights (2, 3) float64" in text
    assert f"{grad_x[0, 0]:.4f}" in text and f"{grad_x[1, 2]:.4f}" in text  # small: in full
    assert np.array_equal(grad_out, [[0, 1, 2], [3, 4, 5]]) and "[3., 4., 5.]]" in text
    assert "x (2, 3) float64, parameter: a leaf that requires grad" in text
    assert ".grad   so far" in text  # the leaf's gradient is already updated
    assert "c (2, 3) float64, input or constant: a leaf that takes no gradient" in mul_text
    assert "no gradient: it does not require grad" in mul_text


def test_explain_summarises_large_arrays_and_names_the_creation_site(rng):
    data = rng.standard_normal((10, 10))
    x = Tensor(data, requires_grad=True, name="x")
    with ta.detect_anomaly():
        line = next_line()
        loss = x.tanh().sum()
        (step,) = [s for s in loss.backward_steps() if s.op == "Tanh"]
        text = step.explain()
    grad = 1 - np.tanh(data) ** 2
    assert f"created at {HERE}:{line}" in text or f"{HERE}:{line}" in text
    assert f"shape (10, 10) float64  min {grad.min():.4g}" in text
    assert f"norm {np.linalg.norm(grad):.4g}" in text
    assert "[[" not in text  # 100 elements: summarised, not printed


def test_explain_of_a_user_op_without_docstring_says_how_to_add_one():
    class Twice(ta.Function):
        @staticmethod
        def forward(ctx, a):
            return 2 * a

        @staticmethod
        def backward(ctx, grad_out):
            return (2 * grad_out,)

    x = Tensor([1.0], requires_grad=True)
    (step,) = [s for s in Twice.apply(x).sum().backward_steps() if s.op == "Twice"]
    assert "Twice has no docstring" in step.explain()


# ----------------------------------------------------------------------- anomaly mode
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_in_forward_names_op_pass_output_and_user_line():
    x = Tensor([-1.0, 4.0], requires_grad=True, name="x", dtype=np.float64)
    with ta.detect_anomaly():
        with pytest.raises(ta.AnomalyError) as info:
            line = next_line()
            y = x.log()
            y * 2  # never reached: the error is raised at the op that made the NaN
    message = str(info.value)
    assert message.startswith("Log (forward) produced NaN in its output (shape (2,))")
    assert "first at index (0,)" in message
    assert f"{HERE}:{line} in test_anomaly_in_forward" in message
    assert "y = x.log()" in message  # the user's line of code
    assert "input 0 'x': shape (2,) float64  min -1" in message
    assert "log of a negative number" in message
    assert isinstance(info.value, RuntimeError)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_in_backward_names_op_input_and_creation_site():
    x = Tensor([0.0, 4.0], requires_grad=True, name="x")
    with ta.detect_anomaly():
        line = next_line()
        y = x.sqrt()
        loss = (y * 3).sum()
        with pytest.raises(ta.AnomalyError) as info:
            loss.backward()
    message = str(info.value)
    assert message.startswith("Sqrt (backward) returned Inf in the gradient for input 0 'x'")
    assert f"{HERE}:{line}" in message and "y = x.sqrt()" in message
    assert "da = dout / (2 * out)" in message  # the op's formula
    assert "arriving at Sqrt was finite" in message


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_in_a_user_op_backward():
    class BadGrad(ta.Function):
        """out = a;  da = dout (but this one divides by zero)"""

        @staticmethod
        def forward(ctx, a):
            return a.copy()

        @staticmethod
        def backward(ctx, grad_out):
            return (grad_out / 0.0,)

    x = Tensor([1.0], requires_grad=True, name="x")
    with ta.detect_anomaly():
        line = next_line()
        loss = BadGrad.apply(x).sum()
        with pytest.raises(ta.AnomalyError, match=r"BadGrad \(backward\) returned Inf") as info:
            loss.backward()
    assert f"{HERE}:{line}" in str(info.value)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_attention_mask_inf_is_allowed_but_a_fully_masked_row_is_not():
    scores = Tensor(np.ones((2, 3)), requires_grad=True)
    causal = Tensor(np.triu(np.ones((2, 3), dtype=bool), k=1))
    with ta.detect_anomaly():
        weights = scores.masked_fill(causal, -np.inf).softmax(axis=-1)  # fine
        weights.sum().backward()
        everything = Tensor(np.ones((2, 3), dtype=bool))
        with pytest.raises(ta.AnomalyError, match="Softmax .forward. produced NaN") as info:
            scores.masked_fill(everything, -np.inf).softmax(axis=-1)
    assert "input 0 held Inf (a -inf mask value" in str(info.value)
    assert "every key masked" in str(info.value)
    assert np.isfinite(scores.grad).all()


def test_nan_carried_in_by_an_input_is_reported_as_such():
    x = Tensor([np.nan, 1.0], requires_grad=True, name="x")
    with ta.detect_anomaly():
        with pytest.raises(ta.AnomalyError, match="input 0 'x' already held NaN"):
            x * 2
        y = Tensor([np.inf, 1.0]) * 2  # an Inf that came in with the data is not an anomaly
    assert y.numpy()[0] == np.inf


def test_a_nan_gradient_passed_to_backward_is_traced_to_its_source():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with ta.detect_anomaly():
        y = x * 2
        with pytest.raises(ta.AnomalyError, match="came from the gradient passed to backward"):
            y.backward(np.array([np.nan, 1.0]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_anomaly_mode_restores_everything_and_is_reentrant():
    before = (
        list(state.observers.on_forward),
        list(state.observers.before_backward),
        list(state.observers.on_backward),
        state.observers.record_sites,
        state.observers.site_finder,
        sys.gettrace(),
    )
    with ta.detect_anomaly():
        with ta.detect_anomaly():
            assert debug.is_anomaly_enabled()
        assert debug.is_anomaly_enabled()
        assert state.observers.record_sites == before[3] + 1
        with pytest.raises(ta.AnomalyError):
            with ta.detect_anomaly():
                Tensor([0.0]) / 0.0
        assert debug.is_anomaly_enabled()
    after = (
        list(state.observers.on_forward),
        list(state.observers.before_backward),
        list(state.observers.on_backward),
        state.observers.record_sites,
        state.observers.site_finder,
        sys.gettrace(),
    )
    assert after == before
    assert not debug.is_anomaly_enabled()
    x = Tensor([1.0], requires_grad=True)
    y = x * 2
    assert y.grad_fn.creation_site is None  # no longer recorded
    with np.errstate(divide="ignore"):
        assert np.isinf((Tensor([1.0]) / 0.0).numpy()).all()  # and no longer checked


def test_check_nan_false_records_sites_but_lets_nan_through():
    x = Tensor([-1.0], requires_grad=True, dtype=np.float64)
    with ta.detect_anomaly(check_nan=False), np.errstate(invalid="ignore"):
        line = next_line()
        y = x.log()
    assert np.isnan(y.numpy()).all()
    assert y.grad_fn.creation_site.endswith(f"{HERE}:{line} in {sys._getframe().f_code.co_name}")


def test_detect_anomaly_as_a_decorator():
    @ta.detect_anomaly()
    def step(x):
        assert debug.is_anomaly_enabled()
        return (x * x).sum()

    x = Tensor([1.0, 2.0], requires_grad=True)
    step(x).backward()
    assert not debug.is_anomaly_enabled()
    np.testing.assert_allclose(x.grad, [2.0, 4.0])


def test_anomaly_mode_changes_no_result():
    params, loss = attention_head(seed=5)
    loss.backward()
    plain = [p.grad.numpy().copy() for p in params]
    with ta.detect_anomaly():
        params, loss = attention_head(seed=5)
        loss.backward()
    for p, want in zip(params, plain):
        np.testing.assert_array_equal(p.grad, want)


def test_a_saved_array_changed_through_an_older_view_is_caught_at_backward():
    memory = np.array([1.0, 2.0, 3.0])
    older_view = memory[:]  # a plain NumPy view: no tensor sees a write through it
    x = ta.from_numpy(memory, requires_grad=True)
    with ta.detect_anomaly():
        line = next_line()
        loss = (x * x).sum()
        older_view[0] = 100.0
        with pytest.raises(ta.AnomalyError) as info:
            loss.backward()
    message = str(info.value)
    assert message.startswith("Mul: saved array 0 (shape (3,), float64) was changed in place")
    assert f"{HERE}:{line}" in message
    assert x.grad is None  # caught before Mul's backward used the changed values


def test_an_in_place_write_through_a_tensor_in_anomaly_mode_names_the_creation_site():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True, name="x", dtype=np.float64)
    with ta.detect_anomaly():
        line = next_line()
        loss = (x.exp() * x).sum()
        with ta.no_grad():
            x.add_(1.0)
        with pytest.raises((ta.AnomalyError, RuntimeError)) as info:
            loss.backward()
    message = str(info.value)
    assert "Mul" in message and f"{HERE}:{line}" in message
    assert x.grad is None


# ------------------------------------------------------------------------------ tracing
@pytest.fixture
def tracing():
    yield
    debug.set_op_logging(0)


def test_trace_level_1_prints_ops_shapes_and_sites_to_stderr(capsys, tracing):
    x = Tensor(np.ones((2, 3)), requires_grad=True, name="x")
    debug.set_op_logging(1)
    line = next_line()
    loss = x.softmax(axis=-1).sum()
    loss.backward()
    debug.set_op_logging(0)
    (x * 2).sum()  # after switching off: nothing printed
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == ""
    assert lines[0].startswith("[tinygrad_attn] forward  Softmax(x (2, 3)) -> (2, 3) float64")
    assert lines[0].endswith(
        f"{HERE}:{line} in test_trace_level_1_prints_ops_shapes_and_sites_to_stderr"
    )
    assert lines[1].startswith("[tinygrad_attn] forward  Sum((2, 3)) -> () float64")
    assert lines[2] == "[tinygrad_attn] backward Sum  grad_out () -> grads {0: (2, 3)}"
    assert lines[3] == "[tinygrad_attn] backward Softmax  grad_out (2, 3) -> grads {0: (2, 3)}"
    assert len(lines) == 4


def test_trace_level_2_adds_statistics_with_nan_counts(capsys, tracing):
    with debug.log_ops(2):
        with np.errstate(invalid="ignore"):
            Tensor([-1.0, 0.0, 4.0], dtype=np.float64).sqrt()
    err = capsys.readouterr().err
    assert "forward  Sqrt((3,)) -> (3,) float64   (not recorded)" in err
    assert "out: shape (3,) float64  min 0  mean 1  max 2  norm 2  NaN 1  Inf 0" in err
    assert debug._logging.level == 0  # the context manager restored it


def test_trace_prints_the_op_before_anomaly_mode_raises(capsys, tracing):
    with debug.log_ops(1), ta.detect_anomaly():
        with pytest.raises(ta.AnomalyError):
            with np.errstate(divide="ignore"):
                Tensor([1.0]).log() - Tensor([0.0]).log()
    assert "forward  Log((1,))" in capsys.readouterr().err


def test_set_op_logging_rejects_a_negative_level():
    with pytest.raises(ValueError, match="must be 0"):
        debug.set_op_logging(-1)


@pytest.mark.parametrize("level, expect_stats", [("1", False), ("2", True)])
def test_environment_variable_turns_tracing_on_at_import(level, expect_stats):
    script = textwrap.dedent(
        """
        import tinygrad_attn as ta
        x = ta.Tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        """
    )
    env = dict(os.environ, TINYGRAD_ATTN_DEBUG=level)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "[tinygrad_attn] forward  Mul((2,), (2,)) -> (2,) float32" in done.stderr
    assert "[tinygrad_attn] backward Mul  grad_out (2,) -> grads {0: (2,), 1: (2,)}" in done.stderr
    assert ("min 1  mean 1.5  max 2" in done.stderr) is expect_stats
    assert done.stdout == ""


def test_the_demo_runs_and_finds_both_planted_bugs():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TINYGRAD_ATTN_DEBUG", None)
    done = subprocess.run(
        [sys.executable, os.path.join(root, "demos", "04_debugging_a_gradient.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "step 5: Softmax.backward" in out and "dx = y * (dy - sum(dy * y))" in out
    assert "RowNormalize (forward) produced NaN" in out
    assert "demos/04_debugging_a_gradient.py:" in out  # the user's line, not the library's
    assert "gradcheck failed: the gradient of the output of RowNormalize" in out
    assert "gradcheck: True" in out
    assert "MatMul saved its input" in out and "modified by an inplace operation" in out


def test_the_engine_imports_no_debugging_tool_but_a_step_still_explains_itself():
    """`BackwardStep.explain()` reaches debug.py through the hook debug installs in state.py."""
    import ast
    import inspect

    from tinygrad_attn import engine

    imported = set()
    for node in ast.walk(ast.parse(inspect.getsource(engine))):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not {name for name in imported if "debug" in name}, imported
    x = ta.Tensor([1.0, 2.0], requires_grad=True)
    (step,) = list((x * x).sum().backward_steps())[1:]
    assert step.explain().startswith("step 1: Mul.backward\n  formula   out = a * b")
