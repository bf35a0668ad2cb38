"""ta.Generator (PyTorch's torch.Generator) and the `generator=` argument of the sampling
functions. The behaviours asserted here were checked against PyTorch 2.13 (values written in)."""

import numpy as np
import pytest

import tinygrad_attn as ta


def test_a_seeded_generator_repeats_its_stream_and_manual_seed_returns_it():
    g = ta.Generator()
    assert g.manual_seed(3) is g
    first = ta.randn(4, generator=g).numpy().copy()
    g.manual_seed(3)
    np.testing.assert_array_equal(ta.randn(4, generator=g).numpy(), first)
    assert not np.array_equal(ta.randn(4, generator=g).numpy(), first)  # the stream moved on


def test_an_unseeded_generator_starts_from_pytorchs_fixed_seed():
    assert ta.Generator().initial_seed() == 67280421310721  # torch.Generator().initial_seed()
    a = ta.rand(5, generator=ta.Generator()).numpy()
    np.testing.assert_array_equal(a, ta.rand(5, generator=ta.Generator()).numpy())


def test_a_generator_seeded_like_the_global_one_gives_the_same_numbers():
    # as in PyTorch: torch.manual_seed(0); torch.randn(3) == torch.randn(3, generator=g(0))
    ta.manual_seed(0)
    expected = ta.randn(3).numpy().copy()
    np.testing.assert_array_equal(
        ta.randn(3, generator=ta.Generator().manual_seed(0)).numpy(), expected
    )


def test_a_generator_leaves_the_global_stream_alone():
    ta.manual_seed(1)
    expected = ta.randn(3).numpy().copy()
    ta.manual_seed(1)
    g = ta.Generator().manual_seed(9)
    ta.randperm(10, generator=g)
    ta.randint(0, 5, (4,), generator=g)
    ta.rand(2, generator=g)
    ta.normal(0.0, 1.0, (2,), generator=g)
    ta.multinomial(np.ones(3), 2, generator=g)
    np.testing.assert_array_equal(ta.randn(3).numpy(), expected)


@pytest.mark.parametrize(
    "draw",
    [
        lambda g: ta.randn(6, generator=g),
        lambda g: ta.rand(6, generator=g),
        lambda g: ta.randint(0, 100, (6,), generator=g),
        lambda g: ta.randperm(6, generator=g),
        lambda g: ta.normal(0.0, 1.0, (6,), generator=g),
        lambda g: ta.multinomial(np.ones(6), 6, generator=g),
    ],
)
def test_each_sampling_function_draws_from_the_generator_it_is_given(draw):
    a = draw(ta.Generator().manual_seed(7)).numpy()
    np.testing.assert_array_equal(draw(ta.Generator().manual_seed(7)).numpy(), a)
    assert not np.array_equal(draw(ta.Generator().manual_seed(8)).numpy(), a)


def test_seed_and_initial_seed():
    g = ta.Generator()
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**63
    a = ta.randn(3, generator=g).numpy()
    np.testing.assert_array_equal(ta.randn(3, generator=ta.Generator().manual_seed(s)).numpy(), a)
    assert ta.Generator().manual_seed(-1).initial_seed() == 2**64 - 1  # PyTorch's wrap-around
    assert ta.Generator().manual_seed(np.int64(4)).initial_seed() == 4
    assert str(ta.Generator("cpu").device) == "cpu"


def test_generator_errors():
    with pytest.raises(TypeError, match="expected an int seed, got float") as info:
        ta.Generator().manual_seed(1.5)
    assert isinstance(info.value, RuntimeError)  # PyTorch raises RuntimeError here
    with pytest.raises(TypeError, match="bool"):
        ta.Generator().manual_seed(True)
    with pytest.raises(ValueError, match="outside"):
        ta.Generator().manual_seed(2**64)
    with pytest.raises(ValueError, match="CPU only"):
        ta.Generator(device="cuda")
    with pytest.raises(TypeError, match="randperm: generator must be a ta.Generator"):
        ta.randperm(3, generator=np.random.default_rng(0))


def test_rng_state_round_trips_for_the_global_stream_and_a_generator():
    """A checkpoint's idiom: keep get_rng_state(), draw, restore, draw the same numbers again."""
    ta.manual_seed(3)
    state = ta.get_rng_state()
    assert state.dtype == ta.uint8 and state.shape == (37,)
    first = ta.randn(4).numpy().copy()
    ta.set_rng_state(state)
    np.testing.assert_array_equal(ta.randn(4).numpy(), first)
    g = ta.Generator().manual_seed(5)
    saved = g.get_state()
    order = ta.randperm(7, generator=g).tolist()
    assert g.set_state(saved) is g
    assert ta.randperm(7, generator=g).tolist() == order


def test_rng_state_survives_save_and_load(tmp_path):
    ta.manual_seed(11)
    ta.save({"rng": ta.get_rng_state()}, tmp_path / "ckpt.pt")
    expected = ta.rand(3).numpy().copy()
    ta.manual_seed(99)
    ta.set_rng_state(ta.load(tmp_path / "ckpt.pt")["rng"])
    np.testing.assert_array_equal(ta.rand(3).numpy(), expected)


def test_fork_rng_puts_the_global_stream_back():
    ta.manual_seed(0)
    with ta.random.fork_rng():
        ta.randn(10)
    after = ta.randn(2).numpy().copy()
    ta.manual_seed(0)
    np.testing.assert_array_equal(ta.randn(2).numpy(), after)


def test_a_pytorch_rng_state_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="PyTorch's own state has 5056.*PCG64"):
        ta.set_rng_state(ta.zeros(5056, dtype=ta.uint8))
    with pytest.raises(ValueError, match="37 bytes"):
        ta.Generator().set_state(ta.zeros(37, dtype=ta.float32))
