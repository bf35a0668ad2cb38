"""A nanoGPT-shaped character model, written the PyTorch way, learns a short text.

The model below is ordinary PyTorch code: `nn.Module`, `nn.ModuleDict`, `nn.Parameter`,
`x.view(...).transpose(1, 2)`, `split(n, dim=2)`, `F.scaled_dot_product_attention(...,
is_causal=True)`, weight tying, `self.apply(init)`, AdamW with two parameter groups, a cosine
learning rate and `torch.multinomial` sampling. Only the three import lines say
`tinygrad_attn`; `tests/test_torch_compat.py` runs this same class under PyTorch and checks
that loss, gradients and AdamW steps agree.

It trains on `demos/data/orchard.txt` (a few paragraphs written for this project), then draws
one training step's graph (`nanogpt_graph.svg`) and writes a page that replays its backward
pass (`nanogpt_backward.html`) into `--out` (default: `out/`, made if needed).

    python demos/05_nanogpt_style.py [--steps N] [--out DIR]
"""

import math
import os
from dataclasses import dataclass

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices: one BLAS thread is faster

import tinygrad_attn as torch  # noqa: E402
import tinygrad_attn.nn as nn  # noqa: E402
from tinygrad_attn.nn import functional as F  # noqa: E402


@dataclass
class Config:
    block_size: int = 32
    vocab_size: int = 64
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0


class Norm(nn.Module):
    """LayerNorm with a weight and a bias, as parameters of its own."""

    def __init__(self, width):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class Attention(nn.Module):
    """Causal multi-head self-attention from one fused q/k/v projection."""

    def __init__(self, cfg):
        super().__init__()
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.n_head = cfg.n_head
        self.dropout = cfg.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, D)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, D)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, D)
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)  # (B, H, T, D)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.norm1 = Norm(cfg.n_embd)
        self.attn = Attention(cfg)
        self.norm2 = Norm(cfg.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.n_embd, 4 * cfg.n_embd), nn.GELU(), nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        )

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.body = nn.ModuleDict(
            dict(
                tok=nn.Embedding(cfg.vocab_size, cfg.n_embd),
                pos=nn.Embedding(cfg.block_size, cfg.n_embd),
                blocks=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
                norm=Norm(cfg.n_embd),
            )
        )
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.body.tok.weight = self.head.weight  # weight tying
        self.apply(self._init)

    def _init(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            torch.nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)  # (T,)
        x = self.body.tok(idx) + self.body.pos(pos)  # (B, T, C)
        for block in self.body.blocks:
            x = block(x)
        logits = self.head(self.body.norm(x))  # (B, T, V)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def optimizer(self, lr, weight_decay=0.1):
        decay = [p for p in self.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.parameters() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))

    @torch.no_grad()
    def generate(self, idx, new_tokens, temperature=1.0, top_k=None):
        for _ in range(new_tokens):
            logits, _ = self(idx[:, -self.cfg.block_size :])
            logits = logits[:, -1, :] / temperature  # (B, V)
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float("inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def load_text():
    """The text, its characters (the vocabulary) and the whole text as token ids."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "data", "orchard.txt"), encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    ids = torch.tensor([chars.index(c) for c in text])
    return text, chars, ids


def batch(ids, block_size, batch_size):
    starts = torch.randint(0, len(ids) - block_size - 1, (batch_size,)).numpy()
    x = torch.stack([ids[int(s) : int(s) + block_size] for s in starts])
    y = torch.stack([ids[int(s) + 1 : int(s) + 1 + block_size] for s in starts])
    return x, y


def main(steps=300, out="out"):
    from tinygrad_attn.viz import render_graph, replay_backward

    torch.manual_seed(0)
    text, chars, ids = load_text()
    cfg = Config(vocab_size=len(chars))
    model = TinyGPT(cfg)
    opt = model.optimizer(lr=3e-3)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=3e-4)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters, {len(text)} characters")
    first = None
    for step in range(steps):
        x, y = batch(ids, cfg.block_size, 16)
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        first = loss.item() if first is None else first
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.3f}  lr {schedule.get_last_lr()[0]:.5f}")
    print(f"loss {first:.3f} -> {loss.item():.3f} (uniform guessing: {math.log(len(chars)):.3f})")
    model.eval()
    prompt = torch.tensor([[chars.index(c) for c in "The "]])
    sample = model.generate(prompt, 80, top_k=5)[0].tolist()
    print("sample:", repr("".join(chars[i] for i in sample)))
    # One short step, drawn and replayed: the graph of a 2-sequence, 8-character batch.
    os.makedirs(out, exist_ok=True)
    x, y = batch(ids, 8, 2)
    _, loss = model(x, y)
    mlps = [f"body.blocks.{i}.mlp" for i in range(cfg.n_layer)]  # one box each: attention shows
    picture = render_graph(loss, path=os.path.join(out, "nanogpt_graph.svg"), collapse=mlps)
    page = replay_backward(loss, os.path.join(out, "nanogpt_backward.html"), collapse=mlps)
    print(f"graph: {picture}\nreplay: {page}")
    return first, loss.item()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--out", default="out", help="folder for the pictures (default: out)")
    args = parser.parse_args()
    main(args.steps, args.out)
