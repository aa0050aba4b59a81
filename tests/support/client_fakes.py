"""A scripted stand-in for the engine: records every command document the client sends and
answers from per-command handlers, so client tests check exactly what goes on the wire."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Union

import bson
from bson.raw_bson import RawBSONDocument

Reply = Union[Mapping[str, Any], Callable[[dict], Mapping[str, Any]]]


def raw(doc: Mapping[str, Any]) -> RawBSONDocument:
    """A document as the engine returns it: raw BSON."""
    return RawBSONDocument(bson.encode(doc))


def cursor_reply(docs: list, cursor_id: int = 0, ns: str = "db.coll", first: bool = True) -> dict:
    key = "firstBatch" if first else "nextBatch"
    return {"cursor": {key: [raw(d) for d in docs], "id": bson.Int64(cursor_id), "ns": ns},
            "ok": 1.0}


def error_reply(code: int, errmsg: str, code_name: str = "", **extra: Any) -> dict:
    reply = {"ok": 0.0, "errmsg": errmsg, "code": code, "codeName": code_name or f"Code{code}"}
    reply.update(extra)
    return reply


class FakeChannel:
    """Records commands; replies with the handler registered for the command name."""

    def __init__(self) -> None:
        self.commands: list[dict] = []
        self.handlers: dict[str, list] = {}

    def on(self, name: str, *replies: Reply) -> FakeChannel:
        """Queue replies for `name`; the last one repeats."""
        self.handlers[name] = list(replies)
        return self

    def run(self, cmd: dict) -> Mapping[str, Any]:
        self.commands.append(cmd)
        name = next(iter(cmd))
        queue = self.handlers.get(name)
        if not queue:
            return self.default(name, cmd)
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return reply(cmd) if callable(reply) else dict(reply)

    @staticmethod
    def default(name: str, cmd: dict) -> dict:
        if name == "insert":
            return {"n": len(cmd["documents"]), "ok": 1.0}
        if name in ("find", "aggregate", "listIndexes", "listCollections"):
            return cursor_reply([])
        return {"ok": 1.0}

    def named(self, name: str) -> list[dict]:
        return [c for c in self.commands if next(iter(c)) == name]

    @property
    def last(self) -> dict:
        return self.commands[-1]
