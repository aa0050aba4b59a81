"""The error labels mongod puts on a failed reply (mongod's error_labels.cpp), decided in one
place for every error: those a handler raised and those a fail point injected.

Drivers act on the labels, not on the codes: `RetryableWriteError` makes them retry a write or
a commit, `TransientTransactionError` retry a whole transaction, `UnknownTransactionCommitResult`
retry a commit, `ResumableChangeStreamError` resume a change stream. A label a handler set
itself, or a fail point's `errorLabels`, is kept as given.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Optional

from ..errors import ErrorCode as E
from .txn_names import FINISHERS, RETRYABLE_WRITES

#: mongod's ErrorCodes::isRetriableError (the retryable-writes specification's list)
RETRYABLE = frozenset({
    E.HostUnreachable, E.HostNotFound, E.NetworkTimeout, E.ShutdownInProgress, E.PrimarySteppedDown,
    E.ExceededTimeLimit, E.SocketException, E.NotWritablePrimary, E.InterruptedAtShutdown,
    E.InterruptedDueToReplStateChange, E.NotPrimaryNoSecondaryOk, E.NotPrimaryOrSecondary,
})
#: isTransientTransactionError's own codes (besides the retryable ones outside commit/abort)
TRANSIENT = frozenset({E.WriteConflict, E.LockTimeout, E.PreparedTransactionInProgress,
                       E.SnapshotUnavailable, E.SnapshotTooOld, E.StaleEpoch, E.StaleConfig})
#: what a change stream resumes after (the change-streams specification's list, less the ones
#: the driver itself treats as resumable)
RESUMABLE = RETRYABLE | {E.RetryChangeStream, E.FailedToSatisfyReadPreference, E.StaleEpoch, E.StaleConfig,
                         E.OBSOLETE_StaleShardVersion, E.QueryPlanKilled, E.CursorKilled}
#: a commit whose write concern failed for one of these is known not to have happened
_COMMIT_KNOWN = frozenset({E.UnsatisfiableWriteConcern, E.UnknownReplWriteConcern})


def error_labels(name: str, cmd: Mapping[str, Any], code: Optional[int], wc_code: Optional[int],
                 is_change_stream: Callable[[], bool] = lambda: False) -> list[str]:
    """The labels of a reply that failed with `code` (None: it succeeded) and/or a write-concern
    error `wc_code`. `is_change_stream` says whether a getMore's cursor is one (asked only when
    that matters)."""
    has_txn = "txnNumber" in cmd
    in_transaction = has_txn and "autocommit" in cmd
    commit_or_abort = name in FINISHERS
    labels: list[str] = []
    retryable = ((has_txn and not in_transaction and name in RETRYABLE_WRITES)
                 or (in_transaction and commit_or_abort)) and (code in RETRYABLE or wc_code in RETRYABLE)
    if retryable:
        labels.append("RetryableWriteError")
    if code is not None and in_transaction:
        transient = code in TRANSIENT
        if commit_or_abort:
            transient |= code == E.NoSuchTransaction and wc_code is None
        else:
            transient |= code in RETRYABLE or code == E.NoSuchTransaction
        if transient:
            labels.append("TransientTransactionError")
    if (name == "commitTransaction" and in_transaction and "TransientTransactionError" not in labels
            and (retryable or code == E.MaxTimeMSExpired
                 or (wc_code is not None and wc_code not in _COMMIT_KNOWN))):
        labels.append("UnknownTransactionCommitResult")
    if (code in RESUMABLE and not retryable and name in ("getMore", "aggregate")
            and (_opens_change_stream(cmd) if name == "aggregate" else is_change_stream())):
        labels.append("ResumableChangeStreamError")
    return labels


def _opens_change_stream(cmd: Mapping[str, Any]) -> bool:
    pipeline = cmd.get("pipeline")
    return (isinstance(pipeline, list) and bool(pipeline) and isinstance(pipeline[0], Mapping)
            and "$changeStream" in pipeline[0])
