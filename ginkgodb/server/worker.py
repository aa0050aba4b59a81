"""One worker process of `serve --workers N`: `python -m ginkgodb.server.worker SPEC`.

The supervisor (supervisor.py) starts it with a fresh interpreter (never a fork of a process
that had LMDB open), the data directory's lock descriptors inherited, and SPEC, a JSON text of
the server's settings and the worker's seat. It then serves as `ginkgodb serve` does.
"""
from __future__ import annotations

import sys

from .worker_spec import decode_spec


def main(argv: list[str]) -> int:
    config, seat = decode_spec(argv[0])
    from .main import run
    return run(config, seat)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
