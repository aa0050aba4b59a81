"""One worker process of `serve --workers N`: `python -m ginkgodb.server.worker SPEC`.

The supervisor (supervisor.py) starts it with a fresh interpreter (never a fork of a process
that had LMDB open), the data directory's lock descriptors inherited, and SPEC, a JSON text of
the server's settings and the worker's seat. It then serves as `ginkgodb serve` does.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

from .config import ServerConfig
from .routing import WorkerSeat

#: ServerConfig fields JSON turns into lists, and back
_TUPLES = ("bind", "tls_disabled_protocols", "argv")


def encode_spec(config: ServerConfig, seat: WorkerSeat) -> str:
    return json.dumps({"config": dataclasses.asdict(config), "seat": dataclasses.asdict(seat)})


def decode_spec(text: str) -> tuple[ServerConfig, WorkerSeat]:
    spec = json.loads(text)
    fields: dict[str, Any] = spec["config"]
    for name in _TUPLES:
        fields[name] = tuple(fields[name])
    fields["set_parameters"] = tuple(tuple(pair) for pair in fields["set_parameters"])
    seat = dict(spec["seat"])
    seat["lock_fds"] = tuple(seat["lock_fds"])
    return ServerConfig(**fields), WorkerSeat(**seat)


def main(argv: list[str]) -> int:
    config, seat = decode_spec(argv[0])
    from .main import run
    return run(config, seat)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
