"""How fast `python -m tinygrad_attn learn` writes its pages, and how fast they open and redraw.

For each model: the command's wall time (a fresh process, as a user runs it), the page's size,
then in headless Chromium (selenium, the system's chromium and chromedriver): the time from
navigation start to the end of the page's first draw, and the time of every slider redraw,
measured inside the page with performance.now(), including the style and layout it causes.

    python benchmarks/learn_page.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def command_time(model: str, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tinygrad_attn", "learn", "--out", str(out), "--model", model],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="learn-bench-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 f"--user-data-dir={profile}", "--window-size=1300,900"):  # fmt: skip
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options), profile


def main() -> int:
    out = Path(tempfile.mkdtemp(prefix="learn-pages-"))
    driver, profile = browser()
    try:
        print(f"{'model':<12} {'command':>8} {'size':>8} {'open':>8} {'redraw median':>14} "
              f"{'p95':>7} {'max':>7}")  # fmt: skip
        for model in ("head", "classifier", "transformer"):
            seconds = command_time(model, out)
            path = out / f"learn_{model}.html"
            driver.get(path.as_uri())
            opened = driver.execute_script(
                "const nav = performance.getEntriesByType('navigation')[0];"
                "return nav.domContentLoadedEventEnd - nav.startTime;"
            )
            # Each redraw timed with the style and layout it causes (reading offsetHeight
            # forces them), forwards and backwards over every frame, three times.
            times = driver.execute_script(
                "const t = [], n = window.taLearn.frames;"
                "for (let r = 0; r < 3; r++) for (let i = 0; i < n; i++) {"
                "  const t0 = performance.now();"
                "  window.taLearn.draw(r % 2 ? n - 1 - i : i);"
                "  document.body.offsetHeight;"
                "  t.push(performance.now() - t0); }"
                "return t;"
            )
            times.sort()
            p95 = times[int(0.95 * (len(times) - 1))]
            print(
                f"{model:<12} {seconds:>7.2f}s {path.stat().st_size / 1e6:>6.2f}MB "
                f"{opened:>6.0f}ms {statistics.median(times):>12.2f}ms {p95:>5.2f}ms "
                f"{times[-1]:>5.1f}ms"
            )
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
