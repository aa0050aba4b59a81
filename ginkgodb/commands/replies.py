"""Reply shapes shared by several commands."""
from __future__ import annotations

from typing import Optional

from bson.int64 import Int64


class ErrmsgOnlyFailure(Exception):
    """A failure mongod reports with `{ok: 0, errmsg}` and no code: its legacy "errmsg" commands
    (e.g. fsyncUnlock when not locked). dispatch turns it into exactly that reply."""

    def __init__(self, errmsg: str) -> None:
        super().__init__(errmsg)
        self.errmsg = errmsg


def cursor_reply(cursor_id: int, ns: str, batch: list, first: bool,
                 post_batch_resume_token: Optional[dict] = None) -> dict:
    """{cursor: {firstBatch | nextBatch, [postBatchResumeToken,] id, ns}} as mongod answers
    find/aggregate/getMore (a change stream's batches carry the resume token)."""
    key = "firstBatch" if first else "nextBatch"
    cursor: dict = {key: batch}
    if post_batch_resume_token is not None:
        cursor["postBatchResumeToken"] = post_batch_resume_token
    cursor["id"] = Int64(cursor_id)
    cursor["ns"] = ns
    return {"cursor": cursor}


def explain_reply(out: dict) -> dict:
    """An explain document finished as mongod finishes it: serverInfo and serverParameters."""
    from ..version import MONGODB_VERSION
    out["serverInfo"] = {"host": "localhost", "port": 27017, "version": MONGODB_VERSION,
                         "gitVersion": "ginkgodb"}
    out["serverParameters"] = {"internalQueryFacetBufferSizeBytes": 104857600,
                               "internalQueryMaxBlockingSortMemoryUsageBytes": 104857600}
    return out
