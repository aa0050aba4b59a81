"""Short writes on the server's event loop: which ones may run there (the declarations' `inline=`
policies below) and what they hold while they do (`hold_for_inline`).

A thread hop to a worker costs about as much as a short write itself, and a transaction's
statements and commit are short writes. They may run on the loop only where they cannot wait:
the engine's write lock and the session's lock are taken without waiting (`hold_for_inline`) (when another thread
holds one, the command runs in a worker, where it may wait), the command runs with waits refused
(engine/no_wait.py: a write that meets a document an open transaction changed raises WouldBlock
before anything is committed, and runs again in a worker, where it waits as before), and what
waits by its nature never runs there: `j`/`fsync` write concerns, read concerns (afterClusterTime
waits), writes on a member that waits for its secondaries, storage that other processes share
(their writer lock cannot be tried), and anything longer than one document.

A write of one document by another filter than `_id` is sent to the loop too, but runs there
only when its plan is bounded work (the engine raises UnboundedPlan otherwise, before writing
anything, and the command runs again in a worker); `OFF_LOOP` remembers the filter shapes that
moved, and `OFF_THE_RULE` names the commands that keep the `_id` rule alone (docs/design/wire.md).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from ..engine import id_hack_key, refusing_waits, session_key
from .context import CommandContext
from .fields import plain

#: a transaction commits on the loop when it changed at most this many documents
SMALL_TRANSACTION_OPS = 16

#: commands that take the engine's write lock when they run on the loop
_WRITERS = frozenset({"insert", "update", "delete", "findAndModify", "findandmodify", "commitTransaction"})


def _concerns_never_wait(cmd: Mapping) -> bool:
    """No read concern (afterClusterTime and majority reads may wait) and a write concern that
    acknowledges at once (not `j` or `fsync`, which flush, nor `w` above one)."""
    if "readConcern" in cmd:
        return False
    wc = cmd.get("writeConcern")
    if wc is None:
        return True
    if not isinstance(wc, Mapping) or wc.get("j") or wc.get("fsync"):
        return False
    w = wc.get("w", 1)
    return w in (0, 1, "majority") and not isinstance(w, bool)


def _one(cmd: Mapping, field: str) -> Optional[Mapping]:
    items = cmd.get(field)
    if type(items) is not list or len(items) != 1 or not isinstance(items[0], Mapping):
        return None
    return items[0]


class OffLoopShapes:
    """Filter shapes whose command last moved from the loop to a worker because its plan was not
    bounded (UnboundedPlan): the next command of the shape on that namespace goes to a worker
    at once instead of planning on the loop again, until the catalog changes (an index built
    or dropped may change the plan)."""

    MAX_SHAPES = 1000

    def __init__(self) -> None:
        self._moved: dict[tuple, int] = {}   # (command, namespace, filter shape) -> catalog generation

    @staticmethod
    def _key(engine: Any, cmd: Mapping, name: str, q: Any) -> tuple:
        shape = tuple((k, tuple(v) if type(v) is dict else type(v) is list) for k, v in q.items())
        return id(engine), name, cmd.get("$db"), cmd.get(name), shape   # one process may serve several engines

    def note(self, engine: Any, cmd: Mapping) -> None:
        name = next(iter(cmd), "")
        q = _filter_of(cmd, name)
        if q is not None:
            if len(self._moved) >= self.MAX_SHAPES:
                self._moved.clear()
            self._moved[self._key(engine, cmd, name, q)] = engine.catalog.gen

    def moved(self, engine: Any, cmd: Mapping, name: str, q: dict) -> bool:
        if not self._moved:
            return False
        gen = self._moved.get(self._key(engine, cmd, name, q))
        return gen is not None and gen == engine.catalog.gen


OFF_LOOP = OffLoopShapes()


def _filter_of(cmd: Mapping, name: str) -> Optional[dict]:
    """The filter of a command the loop may run: find's, one statement's, findAndModify's."""
    if name == "find":
        q = cmd.get("filter")
    elif name in ("update", "delete"):
        statement = _one(cmd, "updates" if name == "update" else "deletes")
        q = plain(statement).get("q") if statement is not None else None
    else:
        q = plain(cmd.get("query", {}))
    return q if type(q) is dict else None


def _one_target(name: str, statement: Mapping, cmd: Mapping, engine: Any) -> bool:
    """An update or delete statement of one document: by `_id`, or (outside a transaction or
    retryable write, whose statement a move would fail) by a filter whose plan the engine then
    bounds (writes._targets: a plan that may read more than one index entry before its target
    raises UnboundedPlan, before anything is written, and the command runs in a worker)."""
    # the wire server hands statements over as raw BSON: one decode of the whole statement
    # costs less than the raw document's lookup and a decode of its `q`
    st = plain(statement)
    q = st.get("q")
    if type(q) is not dict:
        return False
    one = not st.get("multi") if name == "update" else st.get("limit") == 1
    if id_hack_key(q) is not None:
        return name != "update" or one
    return (one and OFF_THE_RULE.isdisjoint(cmd) and _PLAIN_STATEMENT.issuperset(st)
            and not OFF_LOOP.moved(engine, cmd, name, q))


#: commands the bounded-plan rule leaves to the `_id` rule alone: a transaction's statement or
#: a retryable write (a statement that moved to a worker would fail its transaction), and a
#: router's request (with a router's non-`_id` reads on its shards' loops, its targeted reads
#: measured 1.86x a direct read against 1.62x, bench/sharding.py, though each cost the shards
#: less CPU; the cause is not found)
OFF_THE_RULE = frozenset({"txnNumber", "shardVersion"})


#: the statement fields a write on the loop may carry (a hint, a collation or array filters
#: make plans or updates the loop does not take)
_PLAIN_STATEMENT = frozenset({"q", "u", "upsert", "multi", "limit"})


def short_write(cmd: Mapping, engine: Any) -> bool:
    """insert of one document, update or delete of one document (alone or as a transaction's
    statement), with concerns that never wait."""
    if getattr(engine, "shared", True) or not _concerns_never_wait(cmd):
        return False
    name = next(iter(cmd), "")
    if name == "insert":
        return _one(cmd, "documents") is not None
    statement = _one(cmd, "updates" if name == "update" else "deletes")
    return statement is not None and _one_target(name, statement, cmd, engine)


#: the findAndModify fields a run on the loop may carry (a sort, a hint or a collation plan
#: beyond the shortcut planner; arrayFilters and let make updates the loop does not take)
_PLAIN_FIND_AND_MODIFY = frozenset({"findAndModify", "findandmodify", "query", "update", "remove", "new",
                                    "fields", "upsert", "bypassDocumentValidation", "writeConcern", "lsid",
                                    "$db", "$clusterTime", "$readPreference", "comment", "maxTimeMS"})


def short_find_and_modify(cmd: Mapping, engine: Any) -> bool:
    """findAndModify of a plain query (its plan then bounded, as a short write's), outside a
    transaction or retryable write."""
    if getattr(engine, "shared", True) or not _concerns_never_wait(cmd):
        return False
    if not _PLAIN_FIND_AND_MODIFY.issuperset(cmd):   # which also leaves out OFF_THE_RULE's fields
        return False
    name = next(iter(cmd))
    q = _filter_of(cmd, name)
    return q is not None and not OFF_LOOP.moved(engine, cmd, name, q)


def short_commit(cmd: Mapping, engine: Any) -> bool:
    """commitTransaction of a small transaction (or a retried commit), with a write concern
    that never waits."""
    if getattr(engine, "shared", True) or not _concerns_never_wait(cmd):
        return False
    key = session_key(cmd.get("lsid"))
    session = engine.sessions.find(key) if key is not None else None
    txn = getattr(session, "txn", None)
    return txn is None or len(txn.ops) <= SMALL_TRANSACTION_OPS


def short_abort(cmd: Mapping, engine: Any) -> bool:
    """abortTransaction drops what the transaction buffered: nothing to wait for."""
    return _concerns_never_wait(cmd)


class Held:
    """What a command on the loop holds; a context manager that refuses waits while it runs
    and lets go of what it holds at its end."""

    __slots__ = ("engine", "session", "_refusing")

    def __init__(self) -> None:
        self.engine: Any = None
        self.session: Any = None
        self._refusing: Any = None

    def __enter__(self) -> Held:
        # every command on the loop refuses waits, a read too: it then also refuses plans of
        # unbounded work (find's FindRequest.bounded)
        self._refusing = refusing_waits()
        self._refusing.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._refusing is not None:
            self._refusing.__exit__(None, None, None)
            self._refusing = None
        self.release()

    def release(self) -> None:
        engine, session, self.engine, self.session = self.engine, self.session, None, None
        if engine is not None:
            engine.release_writes()
        if session is not None:
            session.lock.release()


_NOTHING = Held()   # a command that neither writes nor belongs to a session's transaction


def hold_for_inline(ctx: CommandContext, cmd: Mapping) -> Optional[Held]:
    """Take, without waiting, what the command would wait for on the loop (its session's lock,
    the engine's write lock); None, holding nothing, when one is held elsewhere: the command
    must then run in a worker. Run the command within the returned context."""
    name = next(iter(cmd), "")
    if "txnNumber" not in cmd and name not in _WRITERS:
        return _NOTHING
    held = Held()
    if _take(ctx, cmd, name, held):
        return held
    held.release()
    return None


def _take(ctx: CommandContext, cmd: Mapping, name: str, held: Held) -> bool:
    engine = ctx.engine
    if "txnNumber" in cmd:
        key = session_key(cmd.get("lsid"))
        if key is not None:   # without a usable lsid the command only answers an error
            session = engine.sessions.session(cmd["lsid"], key)
            if not session.lock.acquire(blocking=False):
                return False
            held.session = session
    if name in _WRITERS:
        member = getattr(ctx.server, "replica_set", None)
        if member is not None:
            from .replicated_member import ReplicatedMember
            if isinstance(member, ReplicatedMember):
                return False   # a member of several waits for its secondaries' positions
        if not engine.hold_writes():
            return False
        held.engine = engine
    return True


__all__ = ["OFF_LOOP", "OFF_THE_RULE", "Held", "OffLoopShapes", "SMALL_TRANSACTION_OPS", "hold_for_inline",
           "short_abort", "short_commit", "short_find_and_modify", "short_write"]
