"""A worker's settings on its command line (`serve --workers N`): the server's configuration and
the worker's seat as one JSON text, written by the supervisor and read by worker.py."""
from __future__ import annotations

import dataclasses
import json
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
