"""The byte-level forwarding of one-shard reads (router/passthrough.py): what it recognises,
what it sends the shard, what it hands back; anything else must fall to the general path."""
from __future__ import annotations

import os
import random
import zlib

import bson
import pytest
from bson.binary import Binary
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from ginkgodb.bsonutil.delta import elements
from ginkgodb.router import passthrough
from ginkgodb.router.chunks import ChunkMap, initial_chunks
from ginkgodb.router.shardkey import ShardKey
from ginkgodb.router.targeting import full_key_equality, point_shard, shards_of, target
from ginkgodb.wire.framing import HEADER, OP_COMPRESSED, OP_MSG, FrameBuffer
from ginkgodb.wire.op_msg import encode_op_msg

GOSSIP = {"lsid": {"id": Binary(os.urandom(16), 4)},
          "$clusterTime": {"clusterTime": Timestamp(1, 1), "signature": {"hash": Binary(b"\0" * 20), "keyId": 0}},
          "$readPreference": {"mode": "primaryPreferred"}}


def _hashed_map() -> ChunkMap:
    key = ShardKey({"_id": "hashed"})
    return ChunkMap("app.h", key, ObjectId(), Timestamp(5, 1), initial_chunks(key, ["s0", "s1"], "s0", 4))


def _reply(doc: dict, request_id: int = 1) -> bytes:
    return encode_op_msg(doc, 900, request_id)


class _Pool:
    def __init__(self, reply: dict) -> None:
        self.sent: list[bytes] = []
        self.reply = reply

    def exchange_bytes(self, body: bytes) -> bytes:
        self.sent.append(body)
        return _reply(self.reply)


class _Shards:
    def __init__(self, pool: _Pool) -> None:
        self.pool = pool
        self.killed: list = []

    def primary_pool(self, shard: str) -> _Pool:
        return self.pool

    def lost(self, shard, pool) -> None:
        pass

    def command(self, shard, db, cmd, **kw):
        self.killed.append(cmd)
        return {"ok": 1.0}


class _Router:
    def __init__(self, cmap, reply: dict) -> None:
        self.cmap = cmap
        self.shards = _Shards(_Pool(reply))
        self.cursors: dict = {}

    def chunk_map(self, ns):
        return self.cmap if self.cmap is not None and ns == self.cmap.ns else None

    def primary_shard(self, db, create=True):
        return "s0"


def _frame(cmd: dict, request_id: int = 41):
    buf = FrameBuffer()
    buf.feed(encode_op_msg(cmd, request_id, 0))
    return buf.next_frame()


FOUND = {"cursor": {"firstBatch": [{"_id": 7, "v": "x"}], "id": Int64(0), "ns": "app.h"}, "ok": 1.0,
         "operationTime": Timestamp(3, 3)}


def test_spans_walk_every_bson_type_like_the_general_walker():
    doc = {"s": "text", "d": {"a": 1}, "l": [1, "2"], "b": Binary(b"xyz", 0), "o": ObjectId(), "t": True,
           "n": None, "i": 5, "q": Int64(6), "f": 1.5, "ts": Timestamp(1, 2), "re": Regex("a.c", "i"),
           "dt": bson.datetime.datetime(2020, 1, 1), "code": bson.code.Code("x"),
           "cws": bson.code.Code("y", {"z": 1}), "dec": bson.decimal128.Decimal128("1.5"),
           "mn": bson.min_key.MinKey(), "mx": bson.max_key.MaxKey()}
    raw = bson.encode(doc)
    found = passthrough.spans(raw)
    general = list(elements(raw))
    assert [(n, t, s, v) for n, t, s, v in found[:-1]] == [(n, t, s, v) for n, t, s, v, _ in general]
    assert [s for _, _, s, _ in found[1:]] == [e for *_, e in general]
    with pytest.raises(ValueError):   # an unknown type byte
        passthrough.spans((8).to_bytes(4, "little") + b"\x7ea\x00\x00")
    with pytest.raises(ValueError):   # an int32 whose bytes run past the document's end
        passthrough.spans((10).to_bytes(4, "little") + b"\x10a\x00\x01\x00\x00")


def test_shard_request_cuts_the_session_fields_and_appends_the_version():
    cmd = {"find": "h", "filter": {"_id": 3}, "limit": 1, **GOSSIP, "$db": "app"}
    cmap = _hashed_map()
    version = passthrough.version_element(cmap, "s1")
    assert passthrough.version_element(cmap, "s1") is version   # encoded once per map and shard
    sent = bson.decode(passthrough.shard_request(bson.encode(cmd), cmd, version))
    assert list(sent) == ["find", "filter", "limit", "$db", "shardVersion"]
    assert sent["shardVersion"] == {"e": cmap.epoch, "t": cmap.timestamp, "v": Timestamp(*cmap.shard_version("s1"))}
    assert bson.decode(passthrough.shard_request(bson.encode(cmd), cmd, b"")) == {
        "find": "h", "filter": {"_id": 3}, "limit": 1, "$db": "app"}
    plain = {"find": "h", "filter": {"_id": 3}, "$db": "app"}
    assert passthrough.shard_request(bson.encode(plain), plain, b"") == bson.encode(plain)   # the client's bytes
    assert bson.decode(passthrough.shard_request(bson.encode(plain), plain, version)) == {
        **plain, "shardVersion": sent["shardVersion"]}


def test_point_shard_agrees_with_the_general_targeting():
    cmap = _hashed_map()
    rng = random.Random(7)
    for _ in range(300):
        v = rng.choice([rng.randrange(-10**6, 10**6), str(rng.random()), rng.random(), ObjectId(), None])
        filter = {"_id": v, "other": {"$gt": 1}}
        chunks = target(filter, cmap)
        assert full_key_equality(filter, cmap)
        assert [point_shard(filter, cmap)] == shards_of(chunks, cmap)
    for filter in ({"_id": {"$in": [1, 2]}}, {"_id": {"$gt": 1}}, {"_id": [1]}, {"_id": Regex("^a")},
                   {"_id": {"a": 1}}, {"x": 1}, {"$and": [{"_id": 1}]}):
        assert point_shard(filter, cmap) is None


def test_a_targeted_find_is_forwarded_and_its_reply_handed_back_as_bytes():
    cmap = _hashed_map()
    router = _Router(cmap, FOUND)
    out = passthrough.answer(router, _frame({"find": "h", "filter": {"_id": 7}, "limit": 1, "singleBatch": True,
                                             **GOSSIP, "$db": "app"}), 77)
    assert isinstance(out, bytes)
    length, request_id, response_to, op_code = HEADER.unpack_from(out)
    assert (length, request_id, response_to, op_code) == (len(out), 77, 41, OP_MSG)
    assert out[16:] == _reply(FOUND)[16:]
    sent = bson.decode(router.shards.pool.sent[0])
    assert "lsid" not in sent and "$clusterTime" not in sent and sent["shardVersion"]["e"] == cmap.epoch
    unsharded = _Router(None, FOUND)
    plain = {"find": "u", "filter": {"v": 1}, "$db": "app"}
    assert isinstance(passthrough.answer(unsharded, _frame(plain), 78), bytes)
    assert unsharded.shards.pool.sent == [bson.encode(plain)]   # nothing to cut or add: the client's bytes


@pytest.mark.parametrize("cmd", [
    {"find": "h", "filter": {"_id": 7}, "collation": {"locale": "fr"}, "$db": "app"},   # a field not forwarded
    {"find": "h", "filter": {"_id": 7}, "txnNumber": Int64(1), "autocommit": False, "$db": "app"},
    {"find": "h", "filter": {"_id": {"$in": [7, 8]}}, "$db": "app"},                     # not one key value
    {"find": "h", "filter": {"v": 1}, "$db": "app"},                                     # a broadcast
    {"find": "h", "filter": {"_id": 7}, "projection": {"a.$": 1}, "$db": "app"},         # refused when sharded
    {"find": "chunks", "filter": {}, "$db": "config"},
    {"count": "h", "query": {"_id": 7}, "$db": "app"},
    {"find": "h", "filter": "not a document", "$db": "app"},
])
def test_what_the_passthrough_does_not_recognise_takes_the_general_path(cmd):
    router = _Router(_hashed_map(), FOUND)
    assert passthrough.answer(router, _frame(cmd), 1) is None
    assert router.shards.pool.sent == []


def test_compressed_checksummed_or_failed_requests_take_the_general_path():
    router = _Router(None, FOUND)
    cmd = {"find": "u", "filter": {}, "$db": "app"}
    msg = encode_op_msg(cmd, 5, 0)
    body = msg[16:]
    compressed = HEADER.pack(16 + 9 + len(zlib.compress(body)), 5, 0, OP_COMPRESSED) + \
        OP_MSG.to_bytes(4, "little") + len(body).to_bytes(4, "little") + b"\x02" + zlib.compress(body)
    checksummed = HEADER.pack(len(msg) + 4, 5, 0, OP_MSG) + b"\x01\0\0\0" + body[4:] + b"\0\0\0\0"
    for message in (compressed, checksummed):
        buf = FrameBuffer()
        buf.feed(message)
        assert passthrough.answer(router, buf.next_frame(), 1) is None
    assert router.shards.pool.sent == []
    for reply in ({"ok": 0.0, "errmsg": "stale", "code": 13388, "codeName": "StaleConfig"},
                  {"ok": 0.0, "errmsg": "not primary", "code": 10107}):
        failing = _Router(None, reply)
        assert passthrough.answer(failing, _frame(cmd), 1) is None   # the general path answers (and retries)
        assert len(failing.shards.pool.sent) == 1


def test_an_open_shard_cursor_becomes_the_routers_cursor(monkeypatch):
    opened = {"cursor": {"firstBatch": [{"_id": i} for i in range(3)], "id": Int64(99), "ns": "app.u"}, "ok": 1.0}
    router = _Router(None, opened)
    calls = []

    def adopt(r, cmd, shard, reply):
        calls.append((cmd["find"], shard, reply["cursor"]["id"]))
        return {"cursor": {"firstBatch": [], "id": Int64(5), "ns": "app.u"}}
    monkeypatch.setattr(passthrough, "adopt_one_shard_cursor", adopt)
    out = passthrough.answer(router, _frame({"find": "u", "filter": {}, "batchSize": 3, "$db": "app"}), 1)
    assert out == {"cursor": {"firstBatch": [], "id": Int64(5), "ns": "app.u"}, "ok": 1.0}
    assert calls == [("u", "s0", 99)]

    def refuse(r, cmd, shard, reply):
        raise ValueError("the router's parse refused it")
    monkeypatch.setattr(passthrough, "adopt_one_shard_cursor", refuse)
    assert passthrough.answer(router, _frame({"find": "u", "filter": {}, "$db": "app"}), 1) is None
    assert router.shards.killed == [{"killCursors": "u", "cursors": [Int64(99)]}]   # not left open on the shard
