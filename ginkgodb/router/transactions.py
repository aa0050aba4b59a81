"""Transactions through the router: single-shard transactions, pinned to the shard of their
first statement (docs/design/sharding.md, "Transactions").

A statement of a transaction (`autocommit: false`) is targeted as the router targets it outside
one (the chunk map, or the database's primary shard); the first statement pins the transaction
to its shard and goes there with `startTransaction`; later statements, getMores and
commitTransaction/abortTransaction go to the same shard with the client's lsid and txnNumber,
and the shard's replies come back unchanged (its cursors are the client's cursors: every getMore
of a transaction names its session). A statement that targets another shard, or several, is
refused with 238 and the transaction is aborted on its shard: a transaction across shards needs
two-phase commit, which the router does not do (docs/compatibility.md, Sharding).
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import bson
from bson.objectid import ObjectId

from ..errors import CommandError, ErrorCode
from . import crud
from .shards import ShardReplyError, StaleConfig
from .state import Router
from .targeting import shards_of, target

#: what a transaction may hold (mongod 7.0); the shard answers mongod's error for anything else
STATEMENTS = frozenset({"find", "getMore", "killCursors", "insert", "update", "delete", "findAndModify",
                        "findandmodify", "aggregate", "distinct", "count", "create", "createIndexes"})
FINISHERS = frozenset({"commitTransaction", "abortTransaction"})
#: fields the router keeps to itself (gossip, read preference); lsid and txnNumber go on
_NOT_FORWARDED = frozenset({"$clusterTime", "$readPreference", "$db", "shardVersion", "databaseVersion",
                            "$audit", "$client"})
ACROSS_SHARDS = ("a transaction whose statements target more than one shard is not supported by the ginkgodb "
                 "router (docs/compatibility.md, Sharding): the transaction runs on {}, this {} targets {}; "
                 "the transaction was aborted")


@dataclass
class RouterTxn:
    """One session's current transaction as the router knows it."""

    txn_number: int
    shard: Optional[str] = None     # pinned by the first statement
    started: bool = False           # the shard received startTransaction
    finished: str = ""              # "committed" / "aborted"


class Transactions:
    """The router's transactions, by session id (the latest of each session)."""

    def __init__(self) -> None:
        self._txns: dict[bytes, RouterTxn] = {}
        self._lock = threading.Lock()

    def get(self, key: bytes) -> Optional[RouterTxn]:
        with self._lock:
            return self._txns.get(key)

    def put(self, key: bytes, txn: RouterTxn) -> None:
        with self._lock:
            self._txns[key] = txn


def _table(router: Router) -> Transactions:
    found = getattr(router, "transactions", None)
    if found is None:
        found = Transactions()
        router.transactions = found   # type: ignore[attr-defined]
    return found


def in_transaction(cmd: Mapping) -> bool:
    return cmd.get("autocommit") is False or next(iter(cmd)) in FINISHERS


def _session_key(cmd: Mapping) -> bytes:
    lsid = cmd.get("lsid")
    if not isinstance(lsid, Mapping) or "id" not in lsid:
        raise CommandError(ErrorCode.InvalidOptions, "Transaction number requires a session ID to also be specified")
    return bson.encode({"id": lsid["id"]})


def _forwarded(cmd: Mapping) -> dict:
    """The client's statement as the shard gets it: its session fields, startTransaction and
    readConcern unchanged (the pinned shard always receives the transaction's first statement)."""
    return {k: v for k, v in cmd.items() if k not in _NOT_FORWARDED}


def run(router: Router, cmd: Mapping) -> Any:
    """A command of a transaction (or commit/abort): the shard's reply, or CommandError."""
    name = next(iter(cmd))
    txn_number = cmd.get("txnNumber")
    if isinstance(txn_number, bool) or not isinstance(txn_number, int):
        raise CommandError(ErrorCode.InvalidOptions, "'autocommit' and 'startTransaction' require a txnNumber "
                                                     "and an lsid")
    key = _session_key(cmd)
    table = _table(router)
    txn = table.get(key)
    if cmd.get("startTransaction") is True and name not in FINISHERS:
        if txn is not None and txn.txn_number >= txn_number:
            raise CommandError(ErrorCode.ConflictingOperationInProgress if txn.txn_number == txn_number
                               else ErrorCode.TransactionTooOld,
                               f"Cannot start a transaction with txnNumber {txn_number}: txnNumber "
                               f"{txn.txn_number} was already used on this session")
        txn = RouterTxn(int(txn_number))
        table.put(key, txn)
    if txn is None or txn.txn_number != txn_number:
        raise CommandError(ErrorCode.NoSuchTransaction, f"Transaction with {{ txnNumber: {txn_number} }} has been "
                                                        "aborted.", labels=("TransientTransactionError",))
    if name in FINISHERS:
        return _finish(router, cmd, name, txn)
    if txn.finished:
        raise CommandError(ErrorCode.NoSuchTransaction, f"Transaction with {{ txnNumber: {txn_number} }} has been "
                                                        f"{txn.finished}.", labels=("TransientTransactionError",))
    db = str(cmd.get("$db", "admin"))
    if name in ("getMore", "killCursors"):
        if txn.shard is None:
            raise CommandError(ErrorCode.CursorNotFound, f"cursor id {cmd.get(name)} not found")
        return _send(router, txn, db, cmd, None)
    if name not in STATEMENTS:
        raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                           f"Cannot run '{name}' in a multi-document transaction.")
    cmd, shards, cmap = _targeted(router, cmd, name, db)
    if txn.shard is None:
        txn.shard = shards[0] if len(shards) == 1 else None
    if len(shards) != 1 or shards[0] != txn.shard:
        pinned = txn.shard or "no shard yet"
        _abort(router, txn, cmd)
        raise CommandError(ErrorCode.NotImplemented, ACROSS_SHARDS.format(pinned, name, ", ".join(shards)))
    return _send(router, txn, db, cmd, cmap)


def _targeted(router: Router, cmd: Mapping, name: str, db: str) -> tuple[Mapping, list[str], Any]:
    """(the statement to send, the shards it targets, the chunk map or None)."""
    coll = cmd.get(name)
    if not isinstance(coll, str):
        return cmd, [router.primary_shard(db) or ""], None
    cmap = router.chunk_map(f"{db}.{coll}")
    if cmap is None:
        return cmd, [router.primary_shard(db) or ""], None
    if cmd.get("collation"):
        return cmd, cmap.shards(), cmap
    if name == "find":
        return cmd, shards_of(target(cmd.get("filter"), cmap), cmap), cmap
    if name in ("count", "distinct", "findAndModify", "findandmodify"):
        return cmd, shards_of(target(cmd.get("query"), cmap), cmap), cmap
    if name == "aggregate":
        pipeline = cmd.get("pipeline") or []
        first = pipeline[0] if pipeline and isinstance(pipeline[0], Mapping) else {}
        return cmd, shards_of(target(first.get("$match"), cmap), cmap), cmap
    if name == "insert":   # every document gets its _id here, as outside a transaction
        docs = [crud._doc(d) for d in cmd.get("documents") or []]
        docs = [d if "_id" in d else {"_id": ObjectId(), **d} for d in docs]
        owners = sorted({cmap.chunk_for(cmap.key.key_of(d)).shard for d in docs})
        return {**cmd, "documents": docs}, owners or cmap.shards(), cmap
    if name in ("update", "delete"):
        field = "updates" if name == "update" else "deletes"
        plan = crud._plan_update if name == "update" else crud._plan_delete
        found: set[str] = set()
        for st in cmd.get(field) or []:
            found.update(plan(router, cmap, crud._doc(st)))
        return cmd, sorted(found) or cmap.shards(), cmap
    return cmd, cmap.shards(), cmap


def _send(router: Router, txn: RouterTxn, db: str, cmd: Mapping, cmap: Any) -> Any:
    assert txn.shard is not None
    start = not txn.started
    sub = _forwarded(cmd)
    if cmap is not None:   # a shard holding a migration's orphans refuses it: the statement is retried
        sub = router.versioned(sub, cmap, txn.shard, no_orphans=True)
    try:
        reply = router.shards.command(txn.shard, db, sub, raw=True)
    except StaleConfig as exc:
        router.chunk_map(cmap.ns if cmap is not None else "", refresh=True)
        if exc.reply.get("unknown") and cmap is not None:
            fresh = router.chunk_map(cmap.ns)
            if fresh is not None:
                router.announce(fresh, [txn.shard], orphans=router.holds_orphans(cmap.ns, txn.shard))
        if not start:
            _abort(router, txn, cmd)
        else:
            txn.shard = None
        raise CommandError(ErrorCode.StaleConfig, str(exc.reply.get("errmsg", "stale config")),
                           labels=("TransientTransactionError",)) from exc
    txn.started = True
    if reply.get("ok") != 1.0:
        raise ShardReplyError(bson.decode(reply.raw))
    return reply


def _finish(router: Router, cmd: Mapping, name: str, txn: RouterTxn) -> Any:
    if txn.shard is None or not txn.started:   # nothing ran: nothing to commit or abort
        if name == "abortTransaction" and txn.finished != "committed":
            txn.finished = "aborted"
            return {}
        if name == "commitTransaction" and txn.finished != "aborted":
            txn.finished = "committed"
            return {}
        raise CommandError(ErrorCode.NoSuchTransaction, f"Transaction with {{ txnNumber: {txn.txn_number} }} has "
                                                        f"been {txn.finished}.")
    reply = router.shards.command(txn.shard, "admin", _forwarded(cmd), raw=True)
    if reply.get("ok") == 1.0:
        txn.finished = "committed" if name == "commitTransaction" else "aborted"
        return reply
    if name == "abortTransaction":
        txn.finished = "aborted"
    raise ShardReplyError(bson.decode(reply.raw))


def _abort(router: Router, txn: RouterTxn, cmd: Mapping) -> None:
    """Abort the transaction on its shard (the client's next statement gets NoSuchTransaction)."""
    if txn.shard is not None and txn.started:
        try:
            router.shards.command(txn.shard, "admin", {"abortTransaction": 1, "lsid": cmd["lsid"],
                                                       "txnNumber": cmd["txnNumber"], "autocommit": False})
        except CommandError:
            pass
    txn.finished = "aborted"
