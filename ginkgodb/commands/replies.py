"""Reply shapes shared by several commands."""
from __future__ import annotations

from bson.int64 import Int64


class ErrmsgOnlyFailure(Exception):
    """A failure mongod reports with `{ok: 0, errmsg}` and no code: its legacy "errmsg" commands
    (e.g. fsyncUnlock when not locked). dispatch turns it into exactly that reply."""

    def __init__(self, errmsg: str) -> None:
        super().__init__(errmsg)
        self.errmsg = errmsg


def cursor_reply(cursor_id: int, ns: str, batch: list, first: bool) -> dict:
    """{cursor: {firstBatch | nextBatch, id, ns}} as mongod answers find/aggregate/getMore."""
    key = "firstBatch" if first else "nextBatch"
    return {"cursor": {key: batch, "id": Int64(cursor_id), "ns": ns}}


def explain_reply(out: dict) -> dict:
    """An explain document finished as mongod finishes it: serverInfo and serverParameters."""
    from ..version import MONGODB_VERSION
    out["serverInfo"] = {"host": "localhost", "port": 27017, "version": MONGODB_VERSION,
                         "gitVersion": "ginkgodb"}
    out["serverParameters"] = {"internalQueryFacetBufferSizeBytes": 104857600,
                               "internalQueryMaxBlockingSortMemoryUsageBytes": 104857600}
    return out
