"""insert_many's batches of plain documents (client/bulk.py `_dict_batch`): encoded and vouched
for in bulk, cut where the statement-at-a-time loop cuts, with its errors."""
from __future__ import annotations

import pytest
from bson.codec_options import DEFAULT_CODEC_OPTIONS
from bson.objectid import ObjectId
from bson.timestamp import Timestamp
from pymongo.errors import DocumentTooLarge

from ginkgodb.bsonutil.checked import CheckedRaw
from ginkgodb.client import bulk
from ginkgodb.client.codec import encode_insert


def _loop(docs: list, acknowledged: bool, limit: int) -> list:
    """The statement-at-a-time rule (Bulk._batch's loop), as the reference."""
    out, total = [], 0
    for doc in docs:
        stmt = encode_insert(doc, DEFAULT_CODEC_OPTIONS)
        size = len(stmt.raw)
        if (not acknowledged and size > bulk.MAX_BSON_OBJECT_SIZE) or (size > bulk.MAX_MESSAGE_SIZE and not out):
            raise DocumentTooLarge(str(size))
        if total + size > limit and out:
            break
        out.append(stmt)
        total += size
    return out


def _same(got: list, expected: list) -> None:
    assert [type(d) for d in got] == [type(d) for d in expected]
    assert [bytes(d.raw) for d in got] == [bytes(d.raw) for d in expected]
    assert [getattr(d, "id_key", None) for d in got] == [getattr(d, "id_key", None) for d in expected]


@pytest.mark.parametrize("limit", [1, 700, 5_000, 50_000, 10**9])
def test_cut_where_the_loop_cuts(limit, monkeypatch):
    monkeypatch.setattr(bulk, "_ENCODE_CHUNK", 7)    # cuts inside and across chunks
    docs = [{"_id": ObjectId(), "n": i, "s": "x" * (i * 13 % 400)} for i in range(60)]
    _same(bulk._dict_batch(docs, DEFAULT_CODEC_OPTIONS, True, limit), _loop(docs, True, limit))


def test_mixed_documents_are_vouched_one_by_one():
    docs = [{"_id": ObjectId(), "a": 1}, {"_id": 5, "a": 2}, {"_id": ObjectId(), "t": Timestamp(0, 0)},
            {"_id": ObjectId(), "big": "y" * 900}, {"_id": True}]
    got = bulk._dict_batch(docs, DEFAULT_CODEC_OPTIONS, True, 10**9)
    _same(got, _loop(docs, True, 10**9))
    assert [type(d) is CheckedRaw for d in got] == [True, True, False, False, False]


def test_a_document_too_large_unacknowledged_is_refused_as_by_the_loop(monkeypatch):
    monkeypatch.setattr(bulk, "MAX_BSON_OBJECT_SIZE", 100)
    docs = [{"_id": ObjectId()}, {"_id": ObjectId(), "s": "z" * 200}]
    with pytest.raises(DocumentTooLarge):
        bulk._dict_batch(docs, DEFAULT_CODEC_OPTIONS, False, 10**9)
