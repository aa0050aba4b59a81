"""The session fields an entry starts with, and a committed transaction's session record, are
the bytes bson.encode gives (they are built directly)."""
from __future__ import annotations

import uuid

import bson
from bson.binary import Binary
from bson.int64 import Int64

from ginkgodb.engine import layout
from ginkgodb.engine.oplog_entries import e_doc, e_i64, session_prefix
from ginkgodb.engine.transactions import _record_commit


def test_session_prefix_is_the_encoded_lsid_and_txn_number_each_time():
    plain = {"id": Binary(uuid.UUID(int=3).bytes, 4)}
    with_uid = {"id": Binary(uuid.UUID(int=3).bytes, 4), "uid": b"\x01" * 32}
    other_subtype = {"id": Binary(uuid.UUID(int=3).bytes, 3)}
    for lsid in (plain, with_uid, plain, other_subtype, other_subtype):
        for n in (1, 2**40):
            want = e_doc(b"lsid", bson.encode(lsid)) + e_i64(b"txnNumber", n)
            assert session_prefix({"lsid": lsid, "txnNumber": n}) == want


class _Txn:
    def __init__(self) -> None:
        self.puts: dict = {}

    def put(self, key: bytes, value: bytes) -> None:
        self.puts[key] = value


class _Batch:
    def __init__(self) -> None:
        self.txn = _Txn()


def test_a_committed_transaction_records_its_number_as_bson_would():
    lsid = {"id": Binary(uuid.UUID(int=4).bytes, 4)}
    batch = _Batch()
    _record_commit(batch, {"lsid": lsid, "txnNumber": 7})   # type: ignore[arg-type]
    [(key, value)] = batch.txn.puts.items()
    assert key == layout.retryable_write_key(layout.session_key(lsid))
    assert value == bson.encode({"txnNumber": Int64(7), "committedTransaction": True})
