#!/usr/bin/env python3
"""Set-up in one step: `python3 dev.py serve` or `python3 dev.py test` on a fresh machine.

On first run (and whenever pyproject.toml changes) it creates `.venv` and installs ginkgodb with
what the command needs; then it runs the server or the whole test suite inside that environment.
Only Python 3.11+ with pip (and venv) is required.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv

ROOT = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(ROOT, ".venv")
BIN = os.path.join(VENV, "Scripts" if os.name == "nt" else "bin")
PY = os.path.join(BIN, "python")
EXTRAS = {"serve": "", "test": "[test]", "bench": "[test,bench]"}


def _stamp(extras: str) -> str:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        digest = hashlib.sha256(f.read() + extras.encode()).hexdigest()[:16]
    return os.path.join(VENV, f".installed-{digest}")


def ensure_env(extras: str) -> None:
    if sys.version_info < (3, 11):
        sys.exit("ginkgodb needs Python 3.11 or newer")
    if not os.path.exists(PY):
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = _stamp(extras)
    if not os.path.exists(stamp):
        print(f"installing ginkgodb{extras} into .venv ...", flush=True)
        subprocess.check_call([PY, "-m", "pip", "install", "-q", "--upgrade", "pip"])
        subprocess.check_call([PY, "-m", "pip", "install", "-q", "-e", f"{ROOT}{extras}"])
        open(stamp, "w").close()


def _workers(rest: list[str]) -> list[str]:
    """pytest-xdist workers, one per core up to 4 (GINKGODB_TEST_WORKERS overrides; 1 = serial);
    `--dist loadfile` keeps each file's tests, and so its module-scoped servers, in one worker."""
    if any(a == "-n" or a.startswith("--numprocesses") or a == "no:xdist" for a in rest):
        return []
    n = int(os.environ.get("GINKGODB_TEST_WORKERS") or min(os.cpu_count() or 1, 4))
    return ["-n", str(n), "--dist", "loadfile"] if n > 1 else []


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXTRAS:
        print(__doc__.strip())
        print("\nusage: python3 dev.py serve [ginkgodb serve options] | test [pytest options] | bench [bench options]")
        return 2
    cmd, rest = argv[0], argv[1:]
    ensure_env(EXTRAS[cmd])
    os.chdir(ROOT)
    if cmd == "serve":
        args = [os.path.join(BIN, "ginkgodb"), "serve", *rest]
    elif cmd == "test":
        args = [PY, "-m", "pytest", *_workers(rest), *rest]
    else:
        args = [PY, "-m", "bench", *rest]
    return subprocess.call(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
