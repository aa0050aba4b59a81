"""Writes the server runs on its event loop must never wait: the loop thread answers every
connection, so a wait there (for another writer, a transaction's document, an fsync lock) would
stall them all, and a wait for something only the loop can end would never end.

The server takes what a short write needs without waiting (`Engine.hold_writes`, a session's
lock) and runs the command on the loop with waits refused: a point where the write would have
to wait raises `WouldBlock` instead, before anything is committed, and the server runs the
command again in a worker thread, where it may wait (docs/design/wire.md, "Short commands on the event loop").
"""
from __future__ import annotations

import threading
from typing import Any

_state = threading.local()


class WouldBlock(Exception):
    """A command run with waits refused reached a wait; nothing of it is committed."""


class UnboundedPlan(WouldBlock):
    """A command run with waits refused planned work no batch size bounds (plan_builder's
    `FindRequest.bounded`); nothing of it was read or written. Unlike a wait, this holds for
    every command of the same filter shape until the catalog changes."""


def waits_refused() -> bool:
    """Is this thread running a command that must not wait?"""
    return getattr(_state, "refused", False)


class refusing_waits:
    """Within the block, this thread's writes raise WouldBlock where they would wait (a class,
    not a generator: every short command on the loop enters it)."""

    __slots__ = ("_before",)

    def __enter__(self) -> None:
        self._before = getattr(_state, "refused", False)
        _state.refused = True

    def __exit__(self, *exc: Any) -> None:
        _state.refused = self._before


__all__ = ["UnboundedPlan", "WouldBlock", "refusing_waits", "waits_refused"]
