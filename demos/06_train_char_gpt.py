"""Train a character-level GPT the way a PyTorch script does it: only the imports say tinygrad_attn.

Everything below is the ordinary PyTorch training script: the `cuda` check and `.to(device)`,
`torch.manual_seed`, the text encoded into a `torch.long` tensor and split 90/10, a `Dataset` of
(x, y) chunks behind a shuffling `DataLoader`, `randint` batches for evaluation under
`@torch.no_grad()`, a small GPT (token and position embeddings, LayerNorm, causal attention with
a `tril` buffer, a GELU MLP, dropout), AdamW with a warmup `LambdaLR`, gradient clipping,
`torch.save` checkpoints in PyTorch's own file format, `--resume`, reloading the checkpoint into a
fresh model, and sampling with `torch.multinomial`. The text is `demos/data/orchard.txt` and
`demos/data/village.txt`, both written for this project; nothing is downloaded.

    python demos/06_train_char_gpt.py [--steps N] [--out DIR] [--resume]

The checkpoint is `DIR/char_gpt.pt` (default `out/`). `--resume` continues from it and ends at the
same weights as one uninterrupted run: the checkpoint holds the random state, and each epoch of the
DataLoader is shuffled from `seed + epoch` (as `DistributedSampler.set_epoch` does), so a resumed
run sees the batches the uninterrupted one would have seen.
"""

import argparse
import itertools
import math
import os
from pathlib import Path

import tinygrad_attn as torch
import tinygrad_attn.nn as nn
import tinygrad_attn.nn.functional as F
from tinygrad_attn.utils.data import DataLoader, Dataset

device = "cuda" if torch.cuda.is_available() else "cpu"
DATA = Path(__file__).resolve().parent / "data"


def load_text() -> str:
    return "\n".join(
        (DATA / name).read_text(encoding="utf-8") for name in ("orchard.txt", "village.txt")
    )


def make_codec(text):
    """The vocabulary (the sorted characters of `text`) and its encode/decode functions."""
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    return chars, (lambda s: [stoi[c] for c in s]), (lambda ids: "".join(itos[i] for i in ids))


class CharChunks(Dataset):
    """Item i: (data[i : i + block_size], the same run shifted by one character)."""

    def __init__(self, data, block_size):
        self.data, self.block_size = data, block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, i):
        chunk = self.data[i : i + self.block_size + 1]
        return chunk[:-1], chunk[1:]


def training_batches(loader, seed, step):
    """Endless (x, y) batches, starting where optimizer step `step` left off: epoch e is shuffled
    from `seed + e`, so the order depends only on the step count."""
    epoch, skip = divmod(step, len(loader))
    while True:
        loader.generator.manual_seed(seed + epoch)
        yield from itertools.islice(loader, skip, None)
        epoch, skip = epoch + 1, 0


def get_batch(data, block_size, batch_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x.to(device), y.to(device)


@torch.no_grad()
def estimate_loss(model, splits, block_size, batch_size, eval_iters):
    out = {}
    model.eval()
    for name, data in splits.items():
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            x, y = get_batch(data, block_size, batch_size)
            _, loss = model(x, y)
            losses[k] = loss.item()
        out[name] = losses.mean()
    model.train()
    return out


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.attn_drop = nn.Dropout(dropout)
        self.resid_drop = nn.Dropout(dropout)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
        att = att.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.GELU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=32, n_embd=64, n_head=4, n_layer=2, dropout=0.1):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.Sequential(
            *[Block(n_embd, n_head, block_size, dropout) for _ in range(n_layer)]
        )
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)  # (T,)
        x = self.drop(self.tok_emb(idx) + self.pos_emb(pos))  # (B, T, n_embd)
        logits = self.lm_head(self.ln_f(self.blocks(x)))  # (B, T, vocab_size)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size :])
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)  # (B, vocab_size)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)  # (B, T + 1)
        return idx


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a character-level GPT on the orchard text.")
    parser.add_argument("--steps", type=int, default=500, help="optimizer steps in all")
    parser.add_argument("--out", default="out", help="folder of the checkpoint char_gpt.pt")
    parser.add_argument("--resume", action="store_true", help="continue from DIR/char_gpt.pt")
    parser.add_argument("--eval-interval", type=int, default=100)
    parser.add_argument("--eval-iters", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=32)
    parser.add_argument("--n-embd", type=int, default=64)
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample-tokens", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1337)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(1)  # tiny matrices: one thread is faster (and resumes bit for bit)
    torch.manual_seed(args.seed)
    text = load_text()
    chars, encode, decode = make_codec(text)
    data = torch.tensor(encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]
    splits = {"train": train_data, "val": val_data}

    loader = DataLoader(
        CharChunks(train_data, args.block_size),
        batch_size=args.batch_size,
        shuffle=True,
        drop_last=True,
        generator=torch.Generator().manual_seed(args.seed),
    )
    config = dict(
        vocab_size=len(chars), block_size=args.block_size, n_embd=args.n_embd, n_layer=args.n_layer
    )
    model = GPT(**config).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    # Linear warmup over 20 steps, then 1/sqrt decay: it does not depend on --steps, so a run
    # resumed with a larger --steps continues the same schedule.
    warmup = 20
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda it: min((it + 1) / warmup, math.sqrt(warmup / (it + 1)))
    )
    path = os.path.join(args.out, "char_gpt.pt")
    os.makedirs(args.out, exist_ok=True)

    start = 0
    if args.resume:
        ckpt = torch.load(path, weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        torch.set_rng_state(ckpt["rng"])
        start = ckpt["step"]
        print(f"resumed from {path} at step {start}")

    history = {}
    batches = training_batches(loader, args.seed, start)
    for it in range(start, args.steps + 1):
        # (the step a run resumes at was evaluated and saved by the run that wrote the checkpoint)
        if (it % args.eval_interval == 0 or it == args.steps) and not (args.resume and it == start):
            losses = estimate_loss(model, splits, args.block_size, args.batch_size, args.eval_iters)
            history[it] = (losses["train"].item(), losses["val"].item())
            print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            checkpoint = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "step": it,
                "config": config,
                "chars": "".join(chars),
                "rng": torch.get_rng_state(),
            }
            torch.save(checkpoint, path)
        if it == args.steps:
            break
        xb, yb = next(batches)
        xb, yb = xb.to(device), yb.to(device)
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()

    # The checkpoint alone rebuilds the model: same config, same weights, same val loss.
    ckpt = torch.load(path, weights_only=True)
    reloaded = GPT(**ckpt["config"]).to(device)
    reloaded.load_state_dict(ckpt["model"])
    val_losses = []
    for m in (model, reloaded):
        torch.manual_seed(args.seed + 1)  # the same evaluation batches for both
        losses = estimate_loss(m, splits, args.block_size, args.batch_size, args.eval_iters)
        val_losses.append(losses["val"].item())
    print(f"val loss, trained model {val_losses[0]:.4f}; reloaded from {path} {val_losses[1]:.4f}")

    context = torch.tensor([encode("The ")], dtype=torch.long, device=device)
    out = reloaded.eval().generate(context, max_new_tokens=args.sample_tokens)
    sample = decode(out[0].tolist())
    print("sample:", sample, sep="\n")
    return {"history": history, "model": model, "val_losses": val_losses, "sample": sample}


if __name__ == "__main__":
    main()
