"""Which session, transaction or retryable write a command belongs to: mongod's rules for
`lsid`, `txnNumber`, `autocommit`, `startTransaction`, and commitTransaction/abortTransaction.

`enter` runs before a command's handler (dispatch) and gives the engine view the handler works
on: the engine itself, a transaction's view, or a retryable write's; `TransactionScope` ends the
transaction on failure as mongod does (docs/design/transactions.md).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from bson.timestamp import Timestamp

from ..engine import (
    RetryableView,
    Transaction,
    TransactionView,
    TxnState,
    abort_transaction,
    commit_transaction,
    session_key,
)
from ..errors import CommandError, ErrorCode
from .context import CommandContext
from .declare import ANY_USER, Args, CommandSpec, command
from .generic import SNAPSHOT_READS
from .inline_writes import short_abort, short_commit
from .txn_names import FINISHERS, RETRYABLE_WRITES

TRANSIENT = ("TransientTransactionError",)

#: what may run inside a multi-document transaction (mongod 7.0)
IN_TRANSACTION = frozenset({"find", "getMore", "killCursors", "insert", "update", "delete", "findAndModify",
                            "findandmodify", "aggregate", "distinct", "create", "createIndexes",
                            "commitTransaction", "abortTransaction"})
_TXN_READ_CONCERNS = ("local", "majority", "snapshot")


def _txn_doc(n: int) -> str:
    return f"{{ txnNumber: {n} }}"


class Scope:
    """The engine view one command runs against, and what to do when it ends."""

    def __init__(self, engine: Any, session: Any = None, txn: Optional[Transaction] = None,
                 txn_number: Optional[int] = None) -> None:
        self.engine = engine
        self.session = session
        self.txn = txn
        self.txn_number = txn_number
        self.replay: Optional[dict] = None
        self.at_cluster_time: Optional[Timestamp] = None  # a snapshot read's point in time

    def __enter__(self) -> Scope:
        if self.session is not None:
            self.session.lock.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.session is not None:
            self.session.lock.release()

    def failed(self, exc: BaseException, base_engine: Any) -> None:
        """A command inside a transaction failed: mongod aborts the transaction."""
        if self.txn is not None and self.session is not None and self.session.txn is self.txn:
            _end(base_engine, self.session, TxnState.ABORTED)

    def succeeded(self, reply: dict, base_engine: Any) -> None:
        if self.at_cluster_time is not None:  # find and aggregate say it in the cursor, distinct on top
            cursor = reply.get("cursor")
            (cursor if isinstance(cursor, dict) else reply)["atClusterTime"] = self.at_cluster_time
        if reply.get("writeErrors") and self.txn is not None and self.session is not None \
                and self.session.txn is self.txn:
            _end(base_engine, self.session, TxnState.ABORTED)


def _end(engine: Any, session: Any, state: TxnState) -> None:
    txn = session.txn
    if txn is not None:
        abort_transaction(engine, txn)
        engine.cursors.kill_owned_by(txn.id)
    session.txn = None
    session.state = state


#: the fields that put a command in a scope other than the engine itself (a snapshot read
#: concern among readConcern's)
_SCOPE_FIELDS = frozenset({"lsid", "txnNumber", "autocommit", "startTransaction", "readConcern"})
#: the scope of a command that has none of them: the engine, no session
PLAIN_SCOPE = Scope(None)


def unscoped(name: str, cmd: Mapping[str, Any]) -> bool:
    """Whether `enter` would give the command the engine itself and nothing to do at its end
    (most embedded commands): no session field, no read concern, not a transaction's finisher."""
    return _SCOPE_FIELDS.isdisjoint(cmd) and name not in FINISHERS


_BEYOND_LSID = _SCOPE_FIELDS - {"lsid"}


def only_touches_session(engine: Any, name: str, cmd: Mapping[str, Any]) -> bool:
    """A command whose only session field is its lsid (what drivers send with every command)
    has the engine itself for its scope, as `enter` would give it: keep the session alive and
    say so, so dispatch skips the scope."""
    if not _BEYOND_LSID.isdisjoint(cmd) or name in FINISHERS:
        return False
    lsid = cmd["lsid"]
    key = session_key(lsid) if lsid is not None else None
    if key is not None:
        engine.sessions.session(lsid, key)  # a command with an lsid keeps its session alive
    return True


def enter(ctx: CommandContext, spec: CommandSpec, cmd: Mapping[str, Any]) -> Scope:
    engine = ctx.engine
    lsid = cmd.get("lsid")
    txn_number = cmd.get("txnNumber")
    autocommit = cmd.get("autocommit")
    start = cmd.get("startTransaction")
    name = next(iter(cmd))
    if txn_number is None:
        if autocommit is not None or start is not None:
            raise CommandError(ErrorCode.InvalidOptions,
                               "'autocommit' and 'startTransaction' require a txnNumber and an lsid")
        if name in FINISHERS:
            raise CommandError(ErrorCode.InvalidOptions, f"{name} requires a txnNumber and an lsid")
        key = session_key(lsid) if lsid is not None else None
        if key is not None:
            engine.sessions.session(lsid, key)  # a command with an lsid keeps its session alive
        rc = cmd.get("readConcern")
        if isinstance(rc, Mapping) and rc.get("level") == "snapshot" and name in SNAPSHOT_READS:
            return _snapshot_read(engine, rc, cmd, name)
        return Scope(engine)
    if isinstance(txn_number, bool) or not isinstance(txn_number, int):
        raise CommandError(ErrorCode.TypeMismatch, "BSON field 'txnNumber' is the wrong type, expected type 'long'")
    key = session_key(lsid) if lsid is not None else None
    if key is None:
        raise CommandError(ErrorCode.InvalidOptions, "Transaction number requires a session ID to also be specified")
    if txn_number < 0:
        raise CommandError(ErrorCode.BadValue, f"TxnNumber cannot be negative, got {txn_number}")
    session = engine.sessions.session(lsid, key)
    if autocommit is None:
        if start is not None:
            raise CommandError(ErrorCode.InvalidOptions, "Specifying startTransaction=true without "
                                                         "autocommit=false is not allowed.")
        if name not in RETRYABLE_WRITES:
            raise CommandError(ErrorCode.TxnNumberOnNonRetryableCommand,
                               "txnNumber may only be provided for multi-document transactions and retryable "
                               f"write commands. autocommit:false was not provided, and {name} is not a "
                               "retryable write command.")
        return _retryable(engine, session, key, lsid, int(txn_number))
    if autocommit is not False:
        raise CommandError(ErrorCode.InvalidOptions, "Specifying autocommit=true is not allowed.")
    if start is not None and start is not True:
        raise CommandError(ErrorCode.InvalidOptions, "Specifying startTransaction=false is not allowed.")
    if name not in IN_TRANSACTION:
        raise CommandError(ErrorCode.OperationNotSupportedInTransaction,
                           f"Cannot run '{name}' in a multi-document transaction.")
    if "writeConcern" in cmd and name not in FINISHERS:
        raise CommandError(ErrorCode.InvalidOptions, "Cannot set write concern after starting a transaction.")
    engine.sessions.ensure_reaper()
    with session.lock:
        if start:
            return _begin(engine, session, int(txn_number), lsid, cmd)
        return _continue(engine, session, key, int(txn_number), name, cmd)


def _snapshot_read(engine: Any, rc: Mapping[str, Any], cmd: Mapping[str, Any], name: str) -> Scope:
    """A read at a point in time outside a transaction: the kept snapshot of `atClusterTime`, or
    a new one of now (whose time the reply reports, so the session's next reads ask for it)."""
    at = rc.get("atClusterTime")
    if at is None:
        at, view = engine.snapshot_reads.now()
    elif not isinstance(at, Timestamp):
        raise CommandError(ErrorCode.TypeMismatch,
                           "BSON field 'atClusterTime' is the wrong type, expected type 'timestamp'")
    else:
        view = engine.snapshot_reads.at(at)
    coll = cmd.get(name)
    meta = view.catalog.get(str(cmd.get("$db", "")), coll) if isinstance(coll, str) else None
    if meta is not None and meta.options.get("capped"):
        raise CommandError(ErrorCode.SnapshotUnavailable,
                           "Reading from capped collections with readConcern snapshot is not supported")
    scope = Scope(view)
    scope.at_cluster_time = at
    return scope


def _retryable(engine: Any, session: Any, key: bytes, lsid: Any, n: int) -> Scope:
    with session.lock:
        if n < session.txn_number:
            kind = "retryable write" if session.state is TxnState.RETRYABLE else "transaction"
            raise CommandError(ErrorCode.TransactionTooOld,
                               f"Retryable write with txnNumber {n} is prohibited on session {_show(lsid)} because "
                               f"a newer {kind} with txnNumber {session.txn_number} has already started on this "
                               "session.")
        if n == session.txn_number and session.state is not TxnState.RETRYABLE and session.state is not TxnState.NONE:
            raise CommandError(ErrorCode.IncompleteTransactionHistory,
                               "Cannot retry a retryable write that has been converted into a transaction")
        if session.txn is not None:
            _end(engine, session, TxnState.ABORTED)
        stored = engine.sessions.stored_retryable(key)
        if stored is not None and int(stored["txnNumber"]) > n:
            raise CommandError(ErrorCode.TransactionTooOld,
                               f"Retryable write with txnNumber {n} is prohibited on session {_show(lsid)} because "
                               f"a newer retryable write with txnNumber {int(stored['txnNumber'])} has already "
                               "started on this session.")
        if stored is not None and int(stored["txnNumber"]) == n and stored.get("committedTransaction"):
            raise CommandError(ErrorCode.IncompleteTransactionHistory,
                               "Cannot retry a retryable write that has been converted into a transaction")
        replay = stored if stored is not None and int(stored["txnNumber"]) == n else None
        session.txn_number = n
        session.state = TxnState.RETRYABLE
    return Scope(RetryableView(engine, key, lsid, n, replay), session, None, n)


def _begin(engine: Any, session: Any, n: int, lsid: Any, cmd: Mapping[str, Any]) -> Scope:
    if n < session.txn_number:
        kind = "retryable write" if session.state is TxnState.RETRYABLE else "transaction"
        raise CommandError(ErrorCode.TransactionTooOld,
                           f"Cannot start transaction with {_txn_doc(n)} on session {_show(lsid)} because a newer "
                           f"{kind} with txnNumberAndRetryCounter {{ txnNumber: {session.txn_number}, "
                           "txnRetryCounter: 0 } has already started on this session.")
    if n == session.txn_number and session.state is not TxnState.NONE:
        raise CommandError(ErrorCode.ConflictingOperationInProgress,
                           "Only servers in a sharded cluster can start a new transaction at the active "
                           "transaction number")
    rc = cmd.get("readConcern")
    if isinstance(rc, Mapping):
        level = rc.get("level", "local")
        if level not in _TXN_READ_CONCERNS:
            raise CommandError(ErrorCode.InvalidOptions,
                               f"The readConcern level must be either 'local' (default), 'majority' or "
                               f"'snapshot' in order to run in a transaction: {level}")
        if "atClusterTime" in rc:
            raise CommandError(ErrorCode.NotImplemented,
                               "readConcern atClusterTime in a transaction is not supported by ginkgodb")
    if session.txn is not None:
        _end(engine, session, TxnState.ABORTED)
    txn = Transaction(engine, {"lsid": lsid, "txnNumber": n, "autocommit": False})
    session.txn = txn
    session.txn_number = n
    session.state = TxnState.IN_PROGRESS
    return Scope(TransactionView(engine, txn), session, txn, n)


def _continue(engine: Any, session: Any, key: Optional[bytes], n: int, name: str, cmd: Mapping[str, Any]) -> Scope:
    if n > session.txn_number and key is not None and _committed_elsewhere(engine, key, n):
        # a commit retried on a new primary (this member applied the transaction's entry) or
        # after this member's restart: committed, as mongod's config.transactions says
        session.txn_number, session.state = n, TxnState.COMMITTED
    if n != session.txn_number or session.state in (TxnState.NONE, TxnState.RETRYABLE):
        raise CommandError(ErrorCode.NoSuchTransaction,
                           f"Given transaction number {n} does not match any in-progress transactions. The "
                           f"active transaction number is {session.txn_number}", labels=TRANSIENT)
    if session.state is TxnState.ABORTED:
        reason = f" because {session.abort_reason}" if session.abort_reason else ""
        session.abort_reason = ""
        raise CommandError(ErrorCode.NoSuchTransaction, f"Transaction with {_txn_doc(n)} has been aborted{reason}.",
                           labels=TRANSIENT)
    if session.state is TxnState.COMMITTED:
        if name == "commitTransaction":
            return Scope(engine, session, None, n)  # retrying a commit answers ok
        raise CommandError(ErrorCode.TransactionCommitted, f"Transaction with {_txn_doc(n)} has been committed.")
    if "readConcern" in cmd:
        raise CommandError(ErrorCode.InvalidOptions,
                           "Only the first command in a transaction may specify a readConcern")
    txn = session.txn
    return Scope(TransactionView(engine, txn), session, txn, n)


def _committed_elsewhere(engine: Any, key: bytes, n: int) -> bool:
    """Did transaction `n` of the session commit here or on the primary whose oplog this member
    applied (its durable record: engine/transactions.py, oplog_apply.py), as mongod's
    config.transactions says "committed"?"""
    stored = engine.sessions.stored_retryable(key)
    return bool(stored is not None and stored.get("committedTransaction") and int(stored["txnNumber"]) == n)


def _show(lsid: Any) -> str:
    uid = lsid.get("id") if isinstance(lsid, Mapping) else None
    return f"{getattr(uid, 'hex', lambda: uid)()}" if uid is not None else str(lsid)


# -- commitTransaction / abortTransaction --------------------------------------------------------
@command("commitTransaction", help="commit a multi-document transaction", admin_only=True, api_version_1=True,
         write_concern=True, privileges=(ANY_USER,), inline=short_commit)
def commit_txn(ctx: CommandContext, args: Args) -> dict:
    scope: Optional[Scope] = ctx.transaction
    if scope is None or scope.session is None:
        raise CommandError(ErrorCode.InvalidOptions, "commitTransaction requires a txnNumber and an lsid")
    session = scope.session
    if scope.txn is None:  # a retried commit of a committed transaction
        return {}
    engine = ctx.base_engine
    txn = scope.txn
    session.txn = None
    try:
        commit_transaction(engine, txn)
    except CommandError:
        session.state = TxnState.ABORTED
        engine.cursors.kill_owned_by(txn.id)
        raise
    session.state = TxnState.COMMITTED
    engine.cursors.kill_owned_by(txn.id)
    wc = args.cmd.get("writeConcern")
    if isinstance(wc, Mapping) and (wc.get("j") or wc.get("fsync")):
        engine.sync()
    return {}


@command("abortTransaction", help="abort a multi-document transaction", admin_only=True, api_version_1=True,
         write_concern=True, privileges=(ANY_USER,), inline=short_abort)
def abort_txn(ctx: CommandContext, args: Args) -> dict:
    scope: Optional[Scope] = ctx.transaction
    if scope is None or scope.session is None:
        raise CommandError(ErrorCode.InvalidOptions, "abortTransaction requires a txnNumber and an lsid")
    if scope.txn is None:
        raise CommandError(ErrorCode.TransactionCommitted,
                           f"Transaction with {_txn_doc(scope.txn_number or 0)} has been committed.")
    _end(ctx.base_engine, scope.session, TxnState.ABORTED)
    scope.session.abort_reason = ""
    return {}
