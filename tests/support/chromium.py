"""Debian's headless Chromium for the browser tests: installed with apt-get on first use when the
tests run as root, otherwise the tests are skipped with the reason."""
from __future__ import annotations

from pathlib import Path

from support.installing import apt_install

CHROMIUM = Path("/usr/bin/chromium")  # the path the browser scripts launch
APT_PACKAGES = ["chromium", "chromium-driver"]


def ensure_chromium() -> Path:
    """The Chromium executable, installing Debian's package when missing and possible."""
    if not CHROMIUM.exists():
        apt_install(APT_PACKAGES, CHROMIUM.exists, "the browser and report tests")
    return CHROMIUM
