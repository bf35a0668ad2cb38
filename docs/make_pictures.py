"""Regenerate every picture in docs/ (the README shows them): the graphs, the replay page, and
headless-Chromium screenshots of each as a reader sees them.

    python docs/make_pictures.py            # from the repository root; needs /usr/bin/chromium

The article's head and the transformer stack are shot at 880 px wide (the README's column);
the replay page at 1400 x 900, at its first, a middle and its last step.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"


def shoot(url: str, out: Path, width: int, height: int) -> None:
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={out}", f"--window-size={width},{height}", url],
        check=True, capture_output=True,
    )  # fmt: skip
    print(f"wrote {out} ({width} x {height})")


def main() -> int:
    python = [sys.executable, "-m", "tinygrad_attn"]
    subprocess.run([*python, "graph", "--out", str(DOCS)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([*python, "replay", "--out", str(tmp)], check=True)
        for stem in ("attention_graph", "transformer_stack"):
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
        steps = len(re.findall(r'"index":', (tmp / "backward.html").read_text(encoding="utf-8")))
        for name, k in (("first", 0), ("middle", steps // 2), ("last", steps)):
            url = (tmp / "backward.html").as_uri() + f"#step={k}"
            shoot(url, DOCS / f"screenshot_replay_{name}.png", 1400, 900)
    return 0


if __name__ == "__main__":
    sys.exit(main())
