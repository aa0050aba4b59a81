"""movePrimary: give a database a new primary shard, copying its unsharded collections there.

The database's entry in etcd carries `movePrimary: {to, until}` for the whole move: every
router's `primary_shard` waits while it is set (router/state.py), so no request reaches the
unsharded collections during the copy. Requests already past that check when the move starts
are given a grace period, and the donor's oplog is replayed after the copy for writes that
landed anyway. Then the entry names the new primary (its version's lastMod raised) and, after
the orphan cleanup delay, the donor's copies are dropped. `until` is a time the mover keeps
ahead of the clock: a router that dies mid-move leaves the database blocked for at most
`HOLD` seconds, with the old primary still named and its copies untouched.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from ..commands.fields import missing_field
from ..errors import CommandError, ErrorCode
from .admin import _ok
from .migration import _changed_ids, _newest_oplog_ts
from .state import Router

HOLD = 30.0
GRACE = 0.5
BATCH = 1000
log = logging.getLogger("ginkgodb.router.move_primary")


def _hold(router: Router, doc: dict, to: str) -> dict:
    held = {**doc, "movePrimary": {"to": to, "until": time.time() + HOLD}}
    router.catalog.put_database(held)
    return held


def _collections(router: Router, shard: str, db: str) -> list[dict]:
    reply = _ok(router.shards.command(shard, db, {"listCollections": 1}))
    out = list(reply["cursor"]["firstBatch"])
    cid = reply["cursor"]["id"]
    while cid:
        more = _ok(router.shards.command(shard, db, {"getMore": cid, "collection": "$cmd.listCollections"}))
        out.extend(more["cursor"]["nextBatch"])
        cid = more["cursor"]["id"]
    return out


def _copy_documents(router: Router, donor: str, to: str, db: str, coll: str) -> None:
    reply = _ok(router.shards.command(donor, db, {"find": coll, "batchSize": BATCH}))
    batch, cid = list(reply["cursor"]["firstBatch"]), reply["cursor"]["id"]
    while True:
        if batch:
            _ok(router.shards.command(to, db, {"insert": coll, "documents": batch, "ordered": False}))
        if not cid:
            return
        more = _ok(router.shards.command(donor, db, {"getMore": cid, "collection": coll, "batchSize": BATCH}))
        batch, cid = list(more["cursor"]["nextBatch"]), more["cursor"]["id"]


def _catch_up(router: Router, donor: str, to: str, db: str, names: list[str], since: Any) -> None:
    for coll in names:
        ids, _ = _changed_ids(router, donor, f"{db}.{coll}", since)
        if not ids:
            continue
        found = _ok(router.shards.command(donor, db, {"find": coll, "filter": {"_id": {"$in": ids}},
                                                      "batchSize": 100000}))["cursor"]["firstBatch"]
        current = {repr(d["_id"]): d for d in found}
        for d in current.values():
            _ok(router.shards.command(to, db, {"update": coll, "updates": [{"q": {"_id": d["_id"]}, "u": d,
                                                                            "upsert": True}]}))
        gone = [i for i in ids if repr(i) not in current]
        if gone:
            _ok(router.shards.command(to, db, {"delete": coll, "deletes": [{"q": {"_id": {"$in": gone}},
                                                                            "limit": 0}]}))


def move_primary(router: Router, cmd: Mapping) -> dict:
    field = next(iter(cmd))
    db = cmd[field]
    if not isinstance(db, str) or not db or "." in db:
        raise CommandError(ErrorCode.InvalidNamespace, f"invalid db name specified: {db}")
    to = cmd.get("to")
    if not isinstance(to, str):
        raise missing_field(field, "to")
    if db in ("admin", "config", "local"):
        raise CommandError(ErrorCode.InvalidOptions, f"Can't move primary for {db} database")
    doc = router.catalog.database(db)
    if doc is None:
        raise CommandError(ErrorCode.NamespaceNotFound, f"Database {db} not found")
    shards = {s["_id"]: s for s in router.catalog.shards()}
    if to not in shards:
        raise CommandError(ErrorCode.ShardNotFound, f"Shard {to} not found")
    donor = str(doc["primary"])
    if donor == to:
        return {}
    if shards[to].get("draining"):
        raise CommandError(ErrorCode.IllegalOperation, f"Can't move primary to shard {to}: it is draining")
    lease = router.catalog.lock(f"movePrimary.{db}")
    if lease is None:
        raise CommandError(ErrorCode.ConflictingOperationInProgress, f"another movePrimary of {db} is in progress")
    created: list[str] = []
    try:
        sharded = {c["_id"].split(".", 1)[1] for c in router.catalog.collections() if c["_id"].startswith(db + ".")}
        colls = [c for c in _collections(router, donor, db)
                 if c["name"] not in sharded and not c["name"].startswith("system.")]
        if any(c.get("type") == "timeseries" or "timeseries" in (c.get("options") or {}) for c in colls):
            raise CommandError(ErrorCode.NotImplemented, "movePrimary of a database holding time-series "
                                                         "collections is not supported by the ginkgodb router")
        existing = {c["name"] for c in _collections(router, to, db)}
        clash = sorted(existing & {c["name"] for c in colls})
        if clash:
            raise CommandError(ErrorCode.NamespaceExists,
                               f"movePrimary: collection {db}.{clash[0]} already exists on shard {to}")
        held = _hold(router, doc, to)
        time.sleep(GRACE)                      # requests routed before the hold finish on the donor
        since = _newest_oplog_ts(router, donor)
        views = [c for c in colls if c.get("type") == "view"]
        tables = [c for c in colls if c.get("type") != "view"]
        for c in tables:
            held = _hold(router, held, to)
            _ok(router.shards.command(to, db, {"create": c["name"], **(c.get("options") or {})}))
            created.append(c["name"])
            indexes = _ok(router.shards.command(donor, db, {"listIndexes": c["name"]}))["cursor"]["firstBatch"]
            specs = [{k: v for k, v in ix.items() if k not in ("v", "ns")} for ix in indexes if ix["name"] != "_id_"]
            if specs:
                _ok(router.shards.command(to, db, {"createIndexes": c["name"], "indexes": specs}))
            _copy_documents(router, donor, to, db, c["name"])
        for c in views:
            _ok(router.shards.command(to, db, {"create": c["name"], **(c.get("options") or {})}))
            created.append(c["name"])
        time.sleep(GRACE)
        _catch_up(router, donor, to, db, [c["name"] for c in tables], since)
        version = dict(doc.get("version") or {})
        version["lastMod"] = int(version.get("lastMod", 1)) + 1
        router.catalog.put_database({k: v for k, v in {**doc, "primary": to, "version": version}.items()
                                     if k != "movePrimary"})
    except BaseException:
        for name in created:                   # the donor stays primary: drop the partial copies
            try:
                router.shards.command(to, db, {"drop": name})
            except CommandError:
                log.warning("movePrimary of %s: the partial copy of %s stays on %s", db, name, to)
        latest = router.catalog.database(db)
        if latest is not None and "movePrimary" in latest:
            router.catalog.put_database({k: v for k, v in latest.items() if k != "movePrimary"})
        raise
    finally:
        router.catalog.unlock(lease)
    time.sleep(router.orphan_cleanup_delay)    # reads that resolved the old primary finish there
    for name in created:
        reply = router.shards.command(donor, db, {"drop": name})
        if reply.get("ok") != 1.0 and reply.get("code") != int(ErrorCode.NamespaceNotFound):
            log.warning("movePrimary of %s: the donor's copy of %s stays on %s: %s", db, name, donor,
                        reply.get("errmsg"))
    return {}


__all__ = ["move_primary"]
