"""Regenerate every picture in docs/ (the README shows them): the graphs, the replay page, and
headless-Chromium screenshots of each as a reader sees them.

    python docs/make_pictures.py            # from the repository root; needs /usr/bin/chromium

The graphs are shot at 880 px wide (the README's column) or their natural width if smaller;
the replay page at 1400 x 900, before its first step, on the softmax's step and after its last.
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
GRAPHS = (
    "attention_graph",
    "transformer_stack",
    "transformer_attention",
    "backward_as_ops",
    "model_gradient",
)


def shoot(url: str, out: Path, width: int, height: int) -> None:
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={out}", f"--window-size={width},{height}", url],
        check=True, capture_output=True,
    )  # fmt: skip
    print(f"wrote {out} ({width} x {height})")


def replay_steps(page: Path) -> list[dict]:
    """The steps of a replay page (its JSON), as the page's script reads them."""
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="rp-data">(.*?)</script>', text, re.S).group(1))["steps"]


def main() -> int:
    python = [sys.executable, "-m", "tinygrad_attn"]
    subprocess.run([*python, "graph", "--out", str(DOCS)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([*python, "replay", "--out", str(tmp)], check=True)
        for stem in GRAPHS:
            svg = (DOCS / f"{stem}.svg").read_text(encoding="utf-8")
            width, height = (
                float(v) for v in re.search(r'viewBox="0.00 0.00 ([\d.]+) ([\d.]+)"', svg).groups()
            )
            shown = min(880, round(width * 4 / 3))  # as the README shows it: at most 880 px
            page = tmp / f"{stem}.html"
            page.write_text(
                f'<!DOCTYPE html><body style="margin:0;background:#fff">'
                f'<img src="{DOCS / stem}.svg" style="width:{shown}px;display:block"></body>'
            )
            shoot(
                page.as_uri(),
                DOCS / f"screenshot_{stem}.png",
                shown,
                round(shown * height / width) + 2,
            )
        replay = tmp / "backward_head.html"
        steps = replay_steps(replay)
        softmax = 1 + next(i for i, step in enumerate(steps) if step["op"] == "Softmax")
        for name, k in (("first", 0), ("softmax", softmax), ("last", len(steps))):
            shoot(f"{replay.as_uri()}#step={k}", DOCS / f"screenshot_replay_{name}.png", 1400, 900)
    return 0


if __name__ == "__main__":
    sys.exit(main())
