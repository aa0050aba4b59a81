"""mongod's error labels (commands/error_labels.py): which failures carry which label."""
from __future__ import annotations

import pytest

from ginkgodb.commands.error_labels import error_labels
from ginkgodb.errors import ErrorCode as E

RETRY_WRITE = {"insert": "c", "txnNumber": 1}
IN_TXN = {"insert": "c", "txnNumber": 1, "autocommit": False}
COMMIT = {"commitTransaction": 1, "txnNumber": 1, "autocommit": False}
ABORT = {"abortTransaction": 1, "txnNumber": 1, "autocommit": False}
STREAM = {"aggregate": "c", "pipeline": [{"$changeStream": {}}], "cursor": {}}

CASES = [
    # (command, code, write-concern code, getMore of a change stream, labels)
    (RETRY_WRITE, E.NotWritablePrimary, None, False, ["RetryableWriteError"]),
    (RETRY_WRITE, None, E.ShutdownInProgress, False, ["RetryableWriteError"]),
    (RETRY_WRITE, E.DuplicateKey, None, False, []),
    ({"insert": "c"}, E.NotWritablePrimary, None, False, []),          # not a retryable write
    ({"find": "c", "txnNumber": 1}, E.NotWritablePrimary, None, False, []),
    (IN_TXN, E.WriteConflict, None, False, ["TransientTransactionError"]),
    (IN_TXN, E.HostUnreachable, None, False, ["TransientTransactionError"]),
    (IN_TXN, E.NoSuchTransaction, None, False, ["TransientTransactionError"]),
    (IN_TXN, E.DuplicateKey, None, False, []),
    (COMMIT, E.NoSuchTransaction, None, False, ["TransientTransactionError"]),
    (COMMIT, E.NoSuchTransaction, E.WriteConcernFailed, False, ["UnknownTransactionCommitResult"]),
    (COMMIT, E.ShutdownInProgress, None, False, ["RetryableWriteError", "UnknownTransactionCommitResult"]),
    (COMMIT, E.MaxTimeMSExpired, None, False, ["UnknownTransactionCommitResult"]),
    (COMMIT, None, E.WriteConcernFailed, False, ["UnknownTransactionCommitResult"]),
    (COMMIT, None, E.UnsatisfiableWriteConcern, False, []),
    (ABORT, E.ShutdownInProgress, None, False, ["RetryableWriteError"]),
    (STREAM, E.HostUnreachable, None, False, ["ResumableChangeStreamError"]),
    ({"getMore": 1, "collection": "c"}, E.HostUnreachable, None, True, ["ResumableChangeStreamError"]),
    ({"getMore": 1, "collection": "c"}, E.HostUnreachable, None, False, []),   # an ordinary cursor
    ({"getMore": 1, "collection": "c"}, E.ChangeStreamFatalError, None, True, []),
    ({"aggregate": "c", "pipeline": [], "cursor": {}}, E.HostUnreachable, None, False, []),
]


@pytest.mark.parametrize("cmd,code,wc_code,stream,expected", CASES)
def test_labels(cmd, code, wc_code, stream, expected):
    assert error_labels(next(iter(cmd)), cmd, code, wc_code, lambda: stream) == expected


def test_a_fail_point_error_gets_the_servers_labels_unless_it_names_its_own(engine):
    from support.runner import Runner

    from ginkgodb.commands import PARAMETERS
    from ginkgodb.commands.fail_points import FAIL_POINTS
    run = Runner(engine)
    param = PARAMETERS.param("enableTestCommands")
    saved, param.value = param.value, True
    try:
        run.db = "admin"
        run({"configureFailPoint": "failCommand", "mode": {"times": 1},
             "data": {"failCommands": ["insert"], "errorCode": int(E.NotWritablePrimary)}})
        run.db = "test"
        reply = run.raw({"insert": "c", "documents": [{}], "txnNumber": 1, "lsid": {"id": b"0" * 16}})
        assert reply["errorLabels"] == ["RetryableWriteError"] and "$injected" not in reply
        run.db = "admin"
        run({"configureFailPoint": "failCommand", "mode": {"times": 1},
             "data": {"failCommands": ["insert"], "errorCode": int(E.NotWritablePrimary), "errorLabels": []}})
        run.db = "test"
        reply = run.raw({"insert": "c", "documents": [{}], "txnNumber": 2, "lsid": {"id": b"0" * 16}})
        assert "errorLabels" not in reply and "$injected" not in reply
    finally:
        param.value = saved
        FAIL_POINTS.reset()
