"""Numbers PyTorch 2.13 gave for a small fixed case of demos/05_nanogpt_style.py (float64):
the loss, every gradient's sum and sum of squares, and every weight after 5 AdamW steps. The
same case runs here without torch and must give the same numbers (rtol 1e-7).

The values were printed by PyTorch running the same model file with its imports swapped
(tests/pytorch_models.py); the weights come from a NumPy generator, so no torch is needed here.
"""

import numpy as np
import pytest
from pytorch_models import DEMO, load_model

import tinygrad_attn as ta

TORCH_LOSS = 1.954078174630178
TORCH_LOSS_AFTER_5_ADAMW = 1.6340021976256374
# name: (sum, sum of squares) of the gradient of the first backward
TORCH_GRADS = {
    "body.tok.weight": (-3.469446951953614e-18, 0.04554970807142447),
    "body.pos.weight": (5.204170427930421e-18, 0.000590357131718602),
    "body.blocks.0.norm1.weight": (-0.0013278539903895364, 6.961122927188726e-06),
    "body.blocks.0.norm1.bias": (-0.009729432153908934, 3.136750661665155e-05),
    "body.blocks.0.attn.qkv.weight": (0.0010966486111540236, 4.703608405931269e-05),
    "body.blocks.0.attn.qkv.bias": (0.004479500357120707, 9.833237068355692e-05),
    "body.blocks.0.attn.proj.weight": (5.800481622797449e-18, 0.0002838543877450124),
    "body.blocks.0.attn.proj.bias": (6.938893903907228e-18, 0.00041015760102305454),
    "body.blocks.0.norm2.weight": (-0.005602086655626011, 5.831652009897305e-05),
    "body.blocks.0.norm2.bias": (-0.005310166157777648, 5.8876127466986344e-05),
    "body.blocks.0.mlp.0.weight": (-0.0012897325130568473, 4.4604823595588106e-05),
    "body.blocks.0.mlp.0.bias": (0.007227809595094189, 0.0001614036798159015),
    "body.blocks.0.mlp.2.weight": (1.1184223035545782e-17, 0.00032748525794977387),
    "body.blocks.0.mlp.2.bias": (5.204170427930421e-18, 0.00026978634262514873),
    "body.norm.weight": (0.1666947512294157, 0.019538755377874136),
    "body.norm.bias": (0.02525990739769332, 0.019643774034275228),
}
# name: (sum, sum of squares) of the weights after 5 AdamW steps
TORCH_WEIGHTS = {
    "body.tok.weight": (0.6297195960948365, 3.0449875013223995),
    "body.pos.weight": (2.0185785470266064, 2.4102981809739346),
    "body.blocks.0.norm1.weight": (-0.814112518298005, 0.386055541404853),
    "body.blocks.0.norm1.bias": (0.4138757768586042, 0.45607340520769457),
    "body.blocks.0.attn.qkv.weight": (-2.4073000012317687, 3.433117304057874),
    "body.blocks.0.attn.qkv.bias": (0.30235873495306664, 1.1017912085858192),
    "body.blocks.0.attn.proj.weight": (-1.0418108834642894, 1.6492838624689394),
    "body.blocks.0.attn.proj.bias": (1.9593139976677685, 1.1746252321320023),
    "body.blocks.0.norm2.weight": (-0.6709380746862528, 0.6299163033165914),
    "body.blocks.0.norm2.bias": (-0.21982104146882303, 0.09621752396884105),
    "body.blocks.0.mlp.0.weight": (-2.564973808702155, 6.736921070291844),
    "body.blocks.0.mlp.0.bias": (0.5724424655329416, 0.9508686499299469),
    "body.blocks.0.mlp.2.weight": (-0.5512653399434779, 6.585867740656718),
    "body.blocks.0.mlp.2.bias": (-0.20966949321162998, 0.9049816712986545),
    "body.norm.weight": (-0.5524826039056181, 0.8067931757121679),
    "body.norm.bias": (0.15588938630111665, 0.7268579453294307),
}
X = [[6, 5, 6, 6, 0, 1], [5, 4, 0, 0, 3, 4]]
Y = [[1, 1, 0, 3, 0, 4], [3, 3, 4, 3, 5, 5]]


@pytest.fixture
def model():
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    module = load_model(DEMO, "tinygrad_attn", "demo05_values")
    net = module.TinyGPT(module.Config(block_size=6, vocab_size=7, n_layer=1, n_head=2, n_embd=4))
    rng = np.random.default_rng(42)
    weights = {k: rng.standard_normal(v.shape) * 0.3 for k, v in net.state_dict().items()}
    weights["head.weight"] = weights["body.tok.weight"]  # tied: one tensor, two names
    net.load_state_dict(weights)
    yield net
    ta.set_default_dtype(previous)


def check(got, expected):
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-7)


def test_loss_and_gradients_equal_pytorch(model):
    _, loss = model(ta.tensor(X), ta.tensor(Y))
    loss.backward()
    np.testing.assert_allclose(loss.item(), TORCH_LOSS, rtol=1e-7)
    grads = dict(model.named_parameters())
    assert list(grads) == list(TORCH_GRADS)
    for name, expected in TORCH_GRADS.items():
        g = grads[name].grad
        check((g.sum(), (g * g).sum()), expected)


def test_five_adamw_steps_equal_pytorch(model):
    opt = model.optimizer(lr=0.05, weight_decay=0.1)
    for _ in range(5):
        opt.zero_grad()
        _, loss = model(ta.tensor(X), ta.tensor(Y))
        loss.backward()
        opt.step()
    np.testing.assert_allclose(loss.item(), TORCH_LOSS_AFTER_5_ADAMW, rtol=1e-7)
    for name, p in model.named_parameters():
        check((p.numpy().sum(), (p.numpy() * p.numpy()).sum()), TORCH_WEIGHTS[name])
