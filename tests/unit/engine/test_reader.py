"""Reads that resume across transactions: a cursor's scan survives its batch transaction closing."""
from __future__ import annotations

from ginkgodb.engine.reader import Reader
from ginkgodb.storage.kv import prefix_end


def _fill(kv, keys):
    with kv.begin(write=True) as txn:
        for k in keys:
            txn.put(k, b"v")


def test_scan_resumes_after_the_transaction_is_replaced(kv):
    keys = [b"k%05d" % i for i in range(3000)]
    _fill(kv, keys)
    reader = Reader(kv)
    seen = []
    reader.open()
    for i, (key, _) in enumerate(reader.scan(b"k", prefix_end(b"k"))):
        seen.append(key)
        if i % 700 == 0:  # a batch boundary: a new read transaction
            reader.close()
            reader.open()
    reader.close()
    assert seen == keys


def test_reverse_scan_resumes_too(kv):
    keys = [b"k%05d" % i for i in range(2000)]
    _fill(kv, keys)
    reader = Reader(kv)
    with reader:
        assert [k for k, _ in reader.scan(b"k", prefix_end(b"k"), reverse=True)] == keys[::-1]
