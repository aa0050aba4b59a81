"""Which event loop the server runs on: the standard library's asyncio (the default), or uvloop
(libuv under asyncio's interface) when asked for, or with `auto` when installed.

Measured on this project's 2-core machine, uvloop gave no consistent gain on ping, find_one or
insert_one (0.88x-1.23x, bench/results/event_loop.md): a command's cost is the Python work of
dispatch and the engine, not the loop's. The server uses only asyncio's public interface, so
either loop serves it.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Optional

CHOICES = ("auto", "asyncio", "uvloop")


def loop_factory(choice: str = "auto") -> Optional[Callable[[], asyncio.AbstractEventLoop]]:
    """The factory of the loop `choice` names (None: asyncio's default); uvloop asked for but
    missing is an error, `auto` without it falls back quietly."""
    if choice not in CHOICES:
        raise ValueError(f"unknown event loop {choice!r}: one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise ValueError("--eventLoop uvloop: the uvloop package is not installed") from None
        return None
    return uvloop.new_event_loop


def running_loop_name() -> str:
    """"uvloop" or "asyncio": what serverStatus and the start-up log report."""
    loop = asyncio.get_running_loop()
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
