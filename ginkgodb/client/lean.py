"""Lean paths for the commonest calls: a filter, an update, nothing else.

find_one(filter), update_one/update_many/replace_one, delete_one/delete_many and
find_one_and_update/replace/delete without options or a session, on a collection whose codec
options pass `plain.plain_codec`, build exactly the command the general path in collection.py
builds for the same call, but skip what cannot apply: the Cursor object, the option checks, the
normalisation of the client's own fields (only the caller's values go through
`plain.wire_plain`). Callers check their arguments, as the general path does, before calling.
"""
from __future__ import annotations

from typing import Any, Optional

from .cursor_base import kill_now
from .plain import wire_plain


def find_one(coll: Any, spec: dict) -> Any:
    """find_one(spec): Cursor(spec).limit(-1)'s single-batch find, its first document."""
    runner = coll._runner
    if runner._closed:
        runner._check_open()    # raises before encoding, as the general path does
    cmd: dict = {"find": coll._name, "filter": wire_plain(spec, coll._codec_options),
                 "limit": 1, "singleBatch": True}
    read_concern = coll._read_concern
    if read_concern.level:
        cmd["readConcern"] = read_concern.document
    reply = runner.run_read(coll._dbname, cmd)    # run(..., reads=True, encoded=True) without a session
    cursor = reply["cursor"]
    if cursor["id"]:    # the engine kept a cursor open: close it, as Cursor would
        dbname, collname = cursor.get("ns", coll._full_name).split(".", 1)
        kill_now(runner, dbname, collname, cursor["id"])
    batch = cursor["firstBatch"]
    return coll._decoder(batch[0]) if batch else None


def update(coll: Any, criteria: Any, document: Any, upsert: bool,
           multi: bool) -> Optional[dict]:
    """One update statement; the raw result as Collection._update gives it."""
    coll._runner._check_open()
    opts = coll._codec_options
    stmt = {"q": wire_plain(criteria, opts), "u": wire_plain(document, opts), "multi": multi,
            "upsert": upsert}
    write_concern = coll._write_concern
    reply = coll._runner.run(coll._dbname, {"update": coll._name, "ordered": True,
                                            "updates": [stmt]},
                             write_concern=write_concern, encoded=True)
    return coll._update_result(coll._write_reply(reply), write_concern.acknowledged)


def delete(coll: Any, criteria: Any, multi: bool) -> dict:
    """One delete statement; the raw result as Collection._delete gives it."""
    coll._runner._check_open()
    stmt = {"q": wire_plain(criteria, coll._codec_options), "limit": int(not multi)}
    reply = coll._runner.run(coll._dbname, {"delete": coll._name, "ordered": True,
                                            "deletes": [stmt]},
                             write_concern=coll._write_concern, encoded=True)
    return coll._write_reply(reply)


def find_and_modify(coll: Any, criteria: Any, new: bool, change: str, value: Any,
                    upsert: Optional[bool]) -> Any:
    """findAndModify with `change` ("update" or "remove") set to `value`; the document."""
    coll._runner._check_open()
    opts = coll._codec_options
    cmd: dict = {"findAndModify": coll._name, "query": wire_plain(criteria, opts), "new": new,
                 change: wire_plain(value, opts)}
    if upsert is not None:
        cmd["upsert"] = upsert
    reply = coll._runner.run(coll._dbname, cmd, write_concern=coll._write_concern,
                             encoded=True)
    if "writeErrors" in reply or "writeConcernError" in reply:
        coll._write_reply(reply)
    found = reply.get("value")
    return None if found is None else coll._decoder(found)
