"""Regenerate the README's screenshots of the learning page (`python -m tinygrad_attn learn`):
the article's head at its first step, at step 30 and at its last, in headless Chromium, 1100 px
wide.

    python docs/make_learn_pictures.py      # from the repository root; needs /usr/bin/chromium
"""

import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
sys.path.insert(0, str(DOCS.parent))
from tinygrad_attn.examples import STEPS  # noqa: E402

SHOWN = (0, 30, STEPS)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "tinygrad_attn", "learn", "--out", tmp], check=True)
        page = Path(tmp) / "learn_head.html"
        for step in SHOWN:
            out = DOCS / f"learn_step{step:03d}.png"
            subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--screenshot={out}", "--window-size=1100,1480", f"{page.as_uri()}#step={step}"],
                check=True, capture_output=True,
            )  # fmt: skip
            print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
