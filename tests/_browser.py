"""Headless Chromium for the page tests (replay, learning page): Debian's chromium driven by its
own chromedriver through selenium, nothing downloaded. Without a browser the tests skip with a
reason, except under CI, where they must run (`.ci/run` installs the browser first)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def browser_problem() -> str | None:
    """Why no headless browser can run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            return f"{exe} is missing (apt-get install chromium chromium-driver)"
    return None


@contextlib.contextmanager
def headless_chromium(prefix: str, window: str) -> Iterator:
    """A selenium driver for a fresh headless Chromium profile (skips or fails without one)."""
    problem = browser_problem()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests, but {problem}")
        pytest.skip(f"no headless browser: {problem}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix=prefix)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--window-size={window}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
