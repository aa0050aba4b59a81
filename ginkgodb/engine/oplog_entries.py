"""Oplog entries (format version 1, docs/design/oplog.md) built from a write batch's operations.

Entries are assembled as BSON bytes directly: an insert embeds the stored document's bytes as its
`o`, `o2` is the document's first element (`_id`, stored first), and an update's diff is computed
on the raw images (bsonutil.delta). Nothing is decoded on the write path. The persisted field
names, types and order here are the replication format: DO NOT CHANGE them.
"""
from __future__ import annotations

import functools
import struct
from itertools import repeat
from operator import itemgetter
from typing import Any, Optional

import bson
from bson.binary import Binary
from bson.int64 import Int64

from ..bsonutil.delta import first_element
from ..errors import CommandError, ErrorCode
from ..limits import MAX_BSON_OBJECT_SIZE
from .batch import CatalogChange, Delete, Insert, Update

FORMAT_VERSION = 1

_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_TS = struct.Struct("<II")          # increment, then seconds
pack_i32 = _I32.pack

#: namespaces whose writes are never logged (mongod logs none of them either)
UNLOGGED_COLLECTIONS = ("system.profile",)
PREIMAGES_NS = "config.system.preimages"
ID_INDEX = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
#: applyOps beyond this answers TransactionTooLarge (mongod 4.0's limit, the 16 MiB + 16 KiB of a
#: command document)
MAX_APPLY_OPS_BYTES = MAX_BSON_OBJECT_SIZE + 16 * 1024


def logged(ns: str) -> bool:
    """Does a write to `ns` belong in the oplog?"""
    db, _, coll = ns.partition(".")
    return db != "local" and ns != PREIMAGES_NS and not coll.endswith(UNLOGGED_COLLECTIONS)


# ------------------------------------------------------------------------------ BSON elements
def e_str(name: bytes, value: str) -> bytes:
    data = value.encode()
    return b"\x02" + name + b"\x00" + pack_i32(len(data) + 1) + data + b"\x00"


def e_doc(name: bytes, raw: bytes) -> bytes:
    return b"\x03" + name + b"\x00" + raw


def e_i64(name: bytes, value: int) -> bytes:
    return b"\x12" + name + b"\x00" + _I64.pack(value)


def e_ts(name: bytes, ts: Any) -> bytes:
    return b"\x11" + name + b"\x00" + _TS.pack(ts.inc, ts.time)


def e_uuid(name: bytes, uuid: Any) -> bytes:
    data = bytes(uuid)
    return b"\x05" + name + b"\x00" + pack_i32(len(data)) + bytes((uuid.subtype,)) + data


def doc(body: bytes) -> bytes:
    return pack_i32(len(body) + 5) + body + b"\x00"


_DOC = itemgetter(3)        # Insert.doc
#: a stored document's bytes after its length up to `_id`'s value, and through its ObjectId
_ID_HEAD, _OID_ELEMENT = itemgetter(slice(4, 9)), itemgetter(slice(4, 21))
_OID_ID_HEAD = {b"\x07_id\x00"}
_O2_OID = b"\x03o2\x00" + pack_i32(17 + 5)     # `o2` of an ObjectId `_id`, up to the element
_BEFORE = itemgetter(3)     # Delete.before
#: `o` of a delete whose `_id` is an ObjectId: its length and name, before the 17 bytes of `_id`
_O_OID_HEAD = b"\x03o\x00" + pack_i32(17 + 5)


def id_element(raw: bytes) -> bytes:
    """A stored document's first element (`_id`): an ObjectId's (the commonest) is the 17 bytes
    after the length, found without walking the element."""
    return raw[4:21] if raw[4] == 7 and raw[5:9] == b"_id\x00" else first_element(raw)

_OP = {kind: e_str(b"op", kind) for kind in ("i", "u", "d", "c", "n")}
_OP_I, _OP_U, _OP_D, _OP_C, _OP_N = (_OP[k] for k in ("i", "u", "d", "c", "n"))
_V2 = b"\x10$v\x00" + pack_i32(2)
#: an update's `o` up to its diff's bytes, and what it adds to the diff's length (the length
#: word, `$v`, the diff's type and name, the closing NUL)
_V2_DIFF = _V2 + b"\x03diff\x00"
_V2_DIFF_SIZE = 4 + len(_V2_DIFF) + 1
_NULL_OPTIME = doc(e_ts(b"ts", bson.Timestamp(0, 0)) + e_i64(b"t", -1))


#: catalog changes no oplog entry records (multikey paths, dictionaries, a background text
#: index build's progress: each member derives them from the documents it holds)
_UNLOGGED = ("multikey", "dictionary", "textIndexBuild")

class EntryBuilder:
    """Turns logical operations into entry bodies: the elements `op` .. `o2` of an entry (or of an
    `applyOps` operation). Keeps the encoded `ns`/`ui` elements of the namespaces it met."""

    def __init__(self) -> None:
        self._ns: dict[str, bytes] = {}
        self._ui: dict[bytes, bytes] = {}
        self._both: dict[tuple[str, Any], bytes] = {}   # (ns, uuid) -> both elements, every write's
        self._last: tuple = (None, None, b"")     # (ns, uuid, their elements) of the last write

    def _ns_ui(self, ns: str, uuid: Any) -> bytes:
        last = self._last
        if last[0] is ns and last[1] is uuid:   # the same collection as the last write: no hash
            return last[2]                      # of the UUID (a Binary's is computed in Python)
        both = self._both.get((ns, uuid))
        if both is None:
            if len(self._both) > 4096:
                self._both.clear()
            both = self._both[(ns, uuid)] = self._encode_ns_ui(ns, uuid)
        self._last = (ns, uuid, both)
        return both

    def _encode_ns_ui(self, ns: str, uuid: Any) -> bytes:
        head = self._ns.get(ns)
        if head is None:
            head = self._ns[ns] = e_str(b"ns", ns)
        if uuid is None:
            return head
        key = bytes(uuid)
        ui = self._ui.get(key)
        if ui is None:
            ui = self._ui[key] = e_uuid(b"ui", uuid)
        return head + ui

    # -- CRUD ----------------------------------------------------------------------------------
    def insert(self, op: Insert) -> bytes:
        raw = op.doc
        key = id_element(raw)
        return b"".join((_OP_I, self._ns_ui(op.ns, op.uuid), b"\x03o\x00", raw, b"\x03o2\x00",
                         pack_i32(len(key) + 5), key, b"\x00"))

    def inserts(self, ops: list) -> list[bytes]:
        """`insert` of each of a batch's inserts, all into one collection (the caller checked
        that): the same bytes, built in one join a document with no call per document (a
        restore's or an import's batch)."""
        first = ops[0]
        head = _OP_I + self._ns_ui(first.ns, first.uuid) + b"\x03o\x00"
        raws = list(map(_DOC, ops))
        if set(map(_ID_HEAD, raws)) == _OID_ID_HEAD:   # every `_id` an ObjectId, first: no Python call a document
            return list(map(b"".join, zip(repeat(head), raws, repeat(_O2_OID), map(_OID_ELEMENT, raws),
                                          repeat(b"\x00"))))
        keys = [raw[4:21] if raw[4] == 7 and raw[5:9] == b"_id\x00" else first_element(raw)   # id_element's
                for raw in raws]                                                            # test, inline
        join, pack = b"".join, pack_i32
        return [join((head, raw, b"\x03o2\x00", pack(len(key) + 5), key, b"\x00"))
                for raw, key in zip(raws, keys)]

    def deletes(self, ops: list) -> list[bytes]:
        """`delete` of each of a batch's deletes, all from one collection (the caller checked
        that): the same bytes, with one head for all (a delete_many's)."""
        first = ops[0]
        head = _OP_D + self._ns_ui(first.ns, first.uuid)
        join = b"".join
        return [join((head, _O_OID_HEAD, before[4:21], b"\x00")) if before[4] == 7 and before[5:9] == b"_id\x00"
                else head + e_doc(b"o", doc(first_element(before))) for before in map(_BEFORE, ops)]

    def update(self, op: Update) -> bytes:
        key = id_element(op.before)
        o2 = (b"\x03o2\x00", pack_i32(len(key) + 5), key, b"\x00")
        diff = op.diff()
        if diff is not None:   # o: {$v: 2, diff}, in one join
            return b"".join((_OP_U, self._ns_ui(op.ns, op.uuid), b"\x03o\x00", pack_i32(len(diff) + _V2_DIFF_SIZE),
                             _V2_DIFF, diff, b"\x00", *o2))
        return b"".join((_OP_U, self._ns_ui(op.ns, op.uuid), b"\x03o\x00", op.after, *o2))

    def delete(self, op: Delete) -> bytes:
        before = op.before
        if before[4] == 7 and before[5:9] == b"_id\x00":     # an ObjectId `_id`: one join
            return b"".join((_OP_D, self._ns_ui(op.ns, op.uuid), _O_OID_HEAD, before[4:21], b"\x00"))
        return _OP_D + self._ns_ui(op.ns, op.uuid) + e_doc(b"o", doc(first_element(before)))

    # -- catalog changes -----------------------------------------------------------------------
    def command(self, change: CatalogChange) -> list[bytes]:
        """The entry bodies of one catalog change (none for the internal ones)."""
        kind, info = change.kind, change.info
        db, _, coll = change.ns.partition(".")
        cmd_ns = f"{db}.$cmd"
        if kind in _UNLOGGED or (kind == "rename" and "from" in info) or info.get("forRename"):
            return []
        if kind == "create":
            options = dict(info.get("options") or {})
            if "viewOn" in options:
                return [self._cmd(cmd_ns, None, {"create": coll, **options})]
            return [self._cmd(cmd_ns, change.uuid, {"create": coll, **options, "idIndex": ID_INDEX})]
        if kind == "drop":
            o2: dict = {"numRecords": Int64(info.get("numRecords", 0))}
            if "viewOn" in info:
                o2["viewOn"] = info["viewOn"]
                return [self._cmd(cmd_ns, None, {"drop": coll}, o2)]
            return [self._cmd(cmd_ns, change.uuid, {"drop": coll}, o2)]
        if kind == "rename":
            o = {"renameCollection": change.ns, "to": info["to"], "stayTemp": False}
            if "dropTarget" in info:
                o["dropTarget"] = info["dropTarget"]
            return [self._cmd(cmd_ns, change.uuid, o)]
        if kind == "createIndexes":
            return [self._cmd(cmd_ns, change.uuid, {"createIndexes": coll, **spec})
                    for spec in info.get("indexes", ())]
        if kind == "dropIndexes":
            return [self._cmd(cmd_ns, change.uuid, {"dropIndexes": coll, "index": spec["name"]}, spec)
                    for spec in info.get("indexes", ())]
        if kind == "collMod":
            o = {"collMod": coll, **(info.get("options") or {})}
            o2 = {"collectionOptions_old": {"uuid": change.uuid, **(info.get("old") or {})}}
            if "index" in info:
                o["index"] = info["index"]
                o2["indexOptions_old"] = info["index_old"]
            return [self._cmd(cmd_ns, change.uuid, o, o2)]
        if kind == "dropDatabase":
            return [self._cmd(change.ns, None, {"dropDatabase": 1})]
        raise ValueError(f"no oplog entry for catalog change {kind!r}")

    def _cmd(self, ns: str, uuid: Any, o: dict, o2: Optional[dict] = None) -> bytes:
        body = _OP_C + self._ns_ui(ns, uuid) + e_doc(b"o", bson.encode(o))
        if o2 is not None:
            body += e_doc(b"o2", bson.encode(o2))
        return body

    def noop(self, o: dict, o2: Optional[dict] = None) -> bytes:
        body = _OP_N + e_str(b"ns", "") + e_doc(b"o", bson.encode(o))
        if o2 is not None:
            body += e_doc(b"o2", bson.encode(o2))
        return body


def tail(term: int, wall_ms: int) -> bytes:
    """The elements after `ts`, the same for every entry of a batch: t, v, wall."""
    return _term_prefix(term) + _I64.pack(wall_ms)


@functools.lru_cache(maxsize=4)
def _term_prefix(term: int) -> bytes:
    """t and v, and wall's name: they change with the term only."""
    return e_i64(b"t", term) + e_i64(b"v", 2) + b"\x09wall\x00"


def session_prefix(txn_info: dict) -> bytes:
    """`lsid` and `txnNumber`, which lead the entries of a retryable write or transaction."""
    return _lsid_element(txn_info["lsid"]) + e_i64(b"txnNumber", int(txn_info["txnNumber"]))


#: the encoded `lsid` element of the sessions met lately, by their `id` (a session commits many
#: times; its lsid is `{id: <UUID>}` unless the driver adds the user's digest)
_LSIDS: dict[bytes, bytes] = {}


def _lsid_element(lsid: Any) -> bytes:
    uid = lsid.get("id") if type(lsid) is dict and len(lsid) == 1 else None
    if type(uid) is not Binary:
        return e_doc(b"lsid", bson.encode(lsid))
    key = bytes((uid.subtype,)) + uid
    element = _LSIDS.get(key)
    if element is None:
        if len(_LSIDS) >= 4096:
            _LSIDS.clear()
        element = _LSIDS[key] = e_doc(b"lsid", bson.encode(lsid))
    return element


def optime(ts: Any, term: int) -> bytes:
    return doc(e_ts(b"ts", ts) + e_i64(b"t", term))


def finish(prefix: bytes, body: bytes, ts: Any, tail_bytes: bytes, suffix: bytes = b"") -> bytes:
    """A whole entry: session fields, body, ts, t/v/wall, then prevOpTime if any."""
    return doc(prefix + body + b"\x11ts\x00" + _TS.pack(ts.inc, ts.time) + tail_bytes + suffix)


_TS_NAME = b"\x11ts\x00"


def finish_all(bodies: list[bytes], secs: int, first_inc: int, tail_bytes: bytes) -> list[bytes]:
    """The entries of an ordinary batch: body i stamped (secs, first_inc + i), built in one join
    each (the write path's hot loop)."""
    fixed = _ENTRY_FIXED + len(tail_bytes)
    lengths = map(pack_i32, map(fixed.__add__, map(len, bodies)))
    stamps = map(_TS.pack, range(first_inc, first_inc + len(bodies)), repeat(secs))
    return list(map(b"".join, zip(lengths, bodies, repeat(_TS_NAME), stamps, repeat(tail_bytes), repeat(b"\x00"))))


_ENTRY_FIXED = 4 + len(_TS_NAME) + 8 + 1


def finish_one(body: bytes, secs: int, inc: int, tail_bytes: bytes) -> bytes:
    """`finish_all` of one body (an insert_one's entry, without the list's loop)."""
    return b"".join((pack_i32(_ENTRY_FIXED + len(tail_bytes) + len(body)), body, _TS_NAME,
                     _TS.pack(inc, secs), tail_bytes, b"\x00"))


def apply_ops_body(bodies: list[bytes]) -> bytes:
    """The body of a transaction's one entry: `op: c` on admin.$cmd with `{applyOps: [...]}`."""
    items = b"".join(b"\x03" + str(i).encode() + b"\x00" + doc(body) for i, body in enumerate(bodies))
    body = _OP_C + e_str(b"ns", "admin.$cmd") + e_doc(b"o", doc(b"\x04applyOps\x00" + doc(items)))
    if len(body) > MAX_APPLY_OPS_BYTES:
        raise CommandError(ErrorCode.TransactionTooLarge,
                           f"Total size of all transaction operations must be less than "
                           f"{MAX_APPLY_OPS_BYTES}. Actual size is {len(body)}")
    return body


def prev_optime(ts: Optional[Any], term: int) -> bytes:
    """`prevOpTime`: the previous entry of the same session's write (the null op time first)."""
    return e_doc(b"prevOpTime", _NULL_OPTIME if ts is None else optime(ts, term))


def stmt_id(n: int) -> bytes:
    return b"\x10stmtId\x00" + pack_i32(n)
