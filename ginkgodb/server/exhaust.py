"""Exhaust cursors (OP_MSG exhaustAllowed): a getMore whose cursor stays open is answered with
moreToCome set, and the server keeps running the same getMore and streaming replies until the
cursor is exhausted or fails; the client only reads. Only getMore streams (awaitable hello does
not exist here), as on mongod.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..wire import Request


def streams(request: Request, reply: Mapping[str, Any]) -> bool:
    """Should the reply to `request` carry moreToCome (and another reply follow)?"""
    if not request.exhaust_allowed or request.more_to_come or request.name != "getMore":
        return False
    if reply.get("ok") != 1.0:
        return False
    cursor = reply.get("cursor")
    return isinstance(cursor, Mapping) and bool(cursor.get("id"))
