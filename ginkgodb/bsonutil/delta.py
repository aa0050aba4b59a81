"""mongod's `$v: 2` update diff ("delta"): computed from two raw BSON documents, and applied.

The oplog records an update as the difference between the document before and after it
(docs/design/oplog.md). `compute_diff` walks both images' raw bytes in step, as mongod's
`computeOplogDiff` does: elements compare by their bytes (mongod's `binaryEqual`, so 1 and 1.0
differ), nothing is decoded, and the diff is built from byte slices of the after image.
`apply_diff` applies a decoded diff to a decoded document (a secondary's work, and change streams'
post-images); applying is idempotent.

Diff shape: `{d: {f: false}, u: {f: v}, i: {f: v}, s<f>: <sub-diff>}` for documents and
`{a: true, l: <new length>, u<i>: v, s<i>: <sub-diff>}` for arrays.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from operator import is_
from typing import Any, Optional, Union

from bson import decode as _bson_decode
from bson import encode as _bson_encode
from bson.dbref import DBRef
from bson.objectid import ObjectId

_I32 = struct.Struct("<i")
_unpack_i32 = _I32.unpack_from

# value sizes of fixed-width BSON types
_FIXED = {0x01: 8, 0x06: 0, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8, 0x12: 8,
          0x13: 16, 0xFF: 0, 0x7F: 0}
_OBJECT, _ARRAY = 0x03, 0x04
#: `{$v: 2, diff: ...}` around a diff: what a diff costs beyond its own bytes (mongod's padding)
DELTA_WRAPPER_BYTES = 4 + (1 + 3 + 4) + (1 + 5) + 1


def _value_end(raw: bytes, t: int, pos: int) -> int:
    """The offset just past the value of type `t` starting at `pos`."""
    size = _FIXED.get(t)
    if size is not None:
        return pos + size
    if t in (0x02, 0x0D, 0x0E):                     # string, code, symbol
        return pos + 4 + _unpack_i32(raw, pos)[0]
    if t in (_OBJECT, _ARRAY, 0x0F):                # document, array, code with scope
        return pos + _unpack_i32(raw, pos)[0]
    if t == 0x05:                                   # binary: length, subtype, bytes
        return pos + 5 + _unpack_i32(raw, pos)[0]
    if t == 0x0B:                                   # regex: two C strings
        return raw.index(b"\x00", raw.index(b"\x00", pos) + 1) + 1
    if t == 0x0C:                                   # DBPointer: string + ObjectId
        return pos + 4 + _unpack_i32(raw, pos)[0] + 12
    raise ValueError(f"unknown BSON type 0x{t:02x}")


def elements(raw: bytes, start: int = 0) -> Iterator[tuple[bytes, int, int, int, int]]:
    """(name, type, element start, value start, element end) of each element of the document at
    `start` (its length prefix)."""
    end = start + _unpack_i32(raw, start)[0] - 1
    pos = start + 4
    index = raw.index
    while pos < end:
        t = raw[pos]
        name_end = index(b"\x00", pos + 1)
        value = name_end + 1
        stop = _value_end(raw, t, value)
        yield raw[pos + 1:name_end], t, pos, value, stop
        pos = stop


def top_level_values(raw: bytes, names: frozenset) -> dict[bytes, Any]:
    """{name: value} of the top-level elements of `raw` named in `names` (BSON names, bytes),
    read from the bytes: the walk stops once every name was met, and only those values are
    decoded (ints, doubles, strings and ObjectIds by hand, others by bson). An array's, a
    document's, a null's or an undefined's value is given as None (an index needs the decoded
    document for those). A name met twice keeps its first value."""
    out: dict[bytes, Any] = {}
    left = len(names)
    end = _unpack_i32(raw, 0)[0] - 1
    pos = 4
    index = raw.index
    while pos < end:
        t = raw[pos]
        value = index(b"\x00", pos + 1) + 1
        size = _FIXED.get(t)
        stop = value + size if size is not None else _value_end(raw, t, value)
        name = raw[pos + 1:value - 1]
        if name in names and name not in out:
            out[name] = _value_of(raw, t, pos, value, stop)
            left -= 1
            if not left:
                break
        pos = stop
    return out


def _value_of(raw: bytes, t: int, start: int, value: int, stop: int) -> Any:
    """The decoded value of the element at `start` (type `t`, value from `value` to `stop`)."""
    if t == 0x10:
        return _unpack_i32(raw, value)[0]
    if t == 0x02:
        return raw[value + 4:stop - 1].decode()
    if t == 0x07:
        return ObjectId(raw[value:stop])
    if t == 0x01:
        return _F64.unpack_from(raw, value)[0]
    if t in (_OBJECT, _ARRAY, 0x06, 0x0A):
        return None
    return next(iter(_bson_decode(_doc((raw[start:stop],))).values()))   # the element alone, by bson


def first_element(raw: bytes) -> bytes:
    """The first element of a document, type and name included (a stored document's `_id`)."""
    t = raw[4]
    value = raw.index(b"\x00", 5) + 1
    return raw[4:_value_end(raw, t, value)]


# --------------------------------------------------------------------------------- diff nodes
class _Doc:
    __slots__ = ("deletes", "updates", "inserts", "subs")

    def __init__(self) -> None:
        self.deletes: list[bytes] = []
        self.updates: list[tuple[bytes, int, bytes]] = []   # name, type, value bytes
        self.inserts: list[tuple[bytes, int, bytes]] = []
        self.subs: list[tuple[bytes, Union[_Doc, _Array]]] = []

    def encode(self) -> bytes:
        parts = []
        if self.deletes:
            parts.append(_element(_OBJECT, b"d", _doc(b"\x08" + n + b"\x00\x00" for n in self.deletes)))
        if self.updates:
            parts.append(_element(_OBJECT, b"u", _doc(_element(t, n, v) for n, t, v in self.updates)))
        if self.inserts:
            parts.append(_element(_OBJECT, b"i", _doc(_element(t, n, v) for n, t, v in self.inserts)))
        for name, sub in self.subs:
            parts.append(_element(_OBJECT, b"s" + name, sub.encode()))
        return _doc(parts)


#: an array diff's first element, `a: true`
_ARRAY_MARK = b"\x08a\x00\x01"


class _Array:
    __slots__ = ("resize", "entries")

    def __init__(self) -> None:
        self.resize: Optional[int] = None
        self.entries: list[tuple[int, Any]] = []   # index, (type, value bytes) | sub-diff

    def encode(self) -> bytes:
        parts = [_ARRAY_MARK]
        if self.resize is not None:
            parts.append(b"\x10l\x00" + _I32.pack(self.resize))
        for idx, entry in self.entries:
            key = str(idx).encode()
            if isinstance(entry, tuple):
                parts.append(_element(entry[0], b"u" + key, entry[1]))
            else:
                parts.append(_element(_OBJECT, b"s" + key, entry.encode()))
        return _doc(parts)


def _element(t: int, name: bytes, value: bytes) -> bytes:
    return bytes((t,)) + name + b"\x00" + value


def _doc(parts: Any) -> bytes:
    body = b"".join(parts)
    return _I32.pack(len(body) + 5) + body + b"\x00"


# --------------------------------------------------------------------------------- computing
def compute_diff(pre: bytes, post: bytes, *, ignore_size_limit: bool = True) -> Optional[bytes]:
    """The diff from `pre` to `post` (BSON bytes of the diff document), or None when
    `ignore_size_limit` is False and the diff would not be smaller than `post` itself (mongod then
    logs the whole document). With the limit ignored, sub-documents and arrays are always diffed
    (what mongod's update operators log); with it, a sub-diff is kept only when smaller than the
    new value, as mongod's pipeline updates."""
    node = _doc_diff(pre, 0, post, 0, ignore_size_limit)
    encoded = node.encode()
    if not ignore_size_limit and len(encoded) + DELTA_WRAPPER_BYTES >= len(post):
        return None
    return encoded


def compute_diff_decoded(old: dict, new: dict, post: bytes, *, ignore_size_limit: bool = True,
                         touched: Optional[frozenset] = None) -> Optional[bytes]:
    """`compute_diff` for a writer that holds both images decoded, `new` being what `post`
    encodes. The walk is the same, on the decoded values: an unchanged value is usually the very
    same object (the update engine copies only what it changes), other values are compared by
    their encoding, and only changed values are encoded. `touched`: the top-level fields the
    update may have changed (its operators' paths), every other field of `new` being `old`'s
    own value; only those are compared. The result equals `compute_diff`'s."""
    encoded = _fields_set(old, new, ignore_size_limit, touched)
    if encoded is None:
        encoded = _dict_diff(old, new, ignore_size_limit).encode()
    if not ignore_size_limit and len(encoded) + DELTA_WRAPPER_BYTES >= len(post):
        return None
    return encoded


try:  # the C encoder itself: bson.encode's checks cost more than encoding one small value
    from bson import _dict_to_bson
    from bson.codec_options import DEFAULT_CODEC_OPTIONS

    def _wrap(value: Any) -> bytes:
        """`{"": value}` as BSON: the value's type byte is at offset 4, its bytes from 6 to -1."""
        return _dict_to_bson({"": value}, False, DEFAULT_CODEC_OPTIONS)

    def _wrap_all(fields: dict) -> bytes:
        """`fields` as a BSON document, in their order (not at top level: `_id` stays in place)."""
        return _dict_to_bson(fields, False, DEFAULT_CODEC_OPTIONS, False)
except ImportError:  # pragma: no cover - every pymongo build has it
    def _wrap(value: Any) -> bytes:
        return _bson_encode({"": value})

    def _wrap_all(fields: dict) -> bytes:
        return _doc(_element(*_typed(v)[:1], k.encode(), _typed(v)[1]) for k, v in fields.items())

_F64 = struct.Struct("<d")
_I64 = struct.Struct("<q")


def _scalar(value: Any) -> Optional[tuple[int, bytes]]:
    """(type, value bytes) of the commonest scalars, without the C encoder's per-call set-up;
    None for anything else (encoded by bson)."""
    tp = type(value)
    if tp is int:
        if -0x80000000 <= value <= 0x7FFFFFFF:
            return 0x10, _I32.pack(value)
        if -0x8000000000000000 <= value <= 0x7FFFFFFFFFFFFFFF:
            return 0x12, _I64.pack(value)
        return None
    if tp is float:
        return 0x01, _F64.pack(value)
    if tp is str:
        data = value.encode()
        return 0x02, _I32.pack(len(data) + 1) + data + b"\x00"
    if tp is bool:
        return 0x08, b"\x01" if value else b"\x00"
    if value is None:
        return 0x0A, b""
    return None


def _typed(value: Any) -> tuple[int, bytes]:
    """(BSON type, value bytes) of any value."""
    fast = _scalar(value)
    if fast is not None:
        return fast
    w = _wrap(value)
    return w[4], w[6:-1]
#: types whose == between two values of that same type is equality of their encodings
_PLAIN = frozenset({int, str, bool, type(None), bytes})


def _same(pv: Any, qv: Any) -> bool:
    """Would `pv` and `qv` encode to the same bytes? (identity first: the common case)"""
    if pv is qv:
        return True
    tp = type(pv)
    if tp is not type(qv):
        return False
    if tp in _PLAIN:
        return bool(pv == qv)
    if tp is dict:
        return len(pv) == len(qv) and all(k1 == k2 and _same(v1, v2)
                                          for (k1, v1), (k2, v2) in zip(pv.items(), qv.items()))
    if tp is list:
        return len(pv) == len(qv) and all(_same(a, b) for a, b in zip(pv, qv))
    if tp is float:
        return _F64.pack(pv) == _F64.pack(qv)
    return _wrap(pv) == _wrap(qv)


#: values a changed field may hold on both sides and still be logged whole (no sub-diff)
_NESTED = (dict, list, DBRef)


def _fields_set(old: dict, new: dict, ignore: bool, touched: Optional[frozenset] = None) -> Optional[bytes]:
    """The diff when `new` holds `old`'s fields in the same order, maybe followed by new ones
    (what $set/$inc of existing or new fields make), and each changed field is either not a
    document or an array on both sides, or, with the size limit ignored, an array that kept its
    elements and grew at the end (what $push makes): `{u: {...}}` of the changed values and
    `{i: {...}}` of the added ones, each encoded in one call, then the grown arrays' `s<f>`, in
    field order (the walk of `_dict_diff` gives the same bytes); None when that walk is needed.
    With `touched` (compute_diff_decoded), only those of `old`'s fields are looked at."""
    count = len(old)
    names = list(new)
    if len(names) < count:
        return None
    before = list(old)
    if (names if len(names) == count else names[:count]) != before:   # in C: the same names, in order
        return None
    if touched is None:
        fields: Any = zip(before, old.values(), new.values())   # stops at old's last field
    else:
        present = [key for key in touched if key in old]
        if len(present) > 1:
            present.sort(key=before.index)   # field order, as the walk meets them
        fields = [(key, old[key], new[key]) for key in present]
    changed: Optional[dict] = None
    grown: Optional[list[bytes]] = None
    for key, pv, qv in fields:
        if qv is pv or _same(pv, qv):
            continue
        if isinstance(pv, _NESTED) and isinstance(qv, _NESTED):
            sub = _appended(pv, qv) if ignore and type(pv) is list and type(qv) is list else None
            if sub is None:
                return None
            if grown is None:
                grown = []
            grown.append(_element(_OBJECT, b"s" + key.encode(), sub))
            continue
        if changed is None:
            changed = {}
        changed[key] = qv
    added = len(names) > count
    if changed is None and grown is None and not added:
        return _EMPTY_DIFF
    parts = [] if changed is None else [b"\x03u\x00" + _wrap_all(changed)]
    if added:
        parts.append(b"\x03i\x00" + _wrap_all({key: new[key] for key in names[count:]}))
    if grown is not None:
        parts += grown
    return _doc(parts)


def _appended(old: list, new: list) -> Optional[bytes]:
    """The array diff `{a: true, u<i>: v, ...}` when `new` is `old` with elements added at the
    end (`_list_diff`'s bytes for that case); None otherwise."""
    n = len(old)
    if len(new) <= n:
        return None
    if not all(map(is_, old, new)):   # in C: the update engine kept the old elements themselves
        for pv, qv in zip(old, new):
            if pv is not qv and not _same(pv, qv):
                return None
    parts = [_ARRAY_MARK]
    for i in range(n, len(new)):
        t, value = _typed(new[i])
        parts.append(_element(t, b"u" + str(i).encode(), value))
    return _doc(parts)


_EMPTY_DIFF = b"\x05\x00\x00\x00\x00"


def _dict_diff(old: dict, new: dict, ignore: bool) -> _Doc:
    node = _Doc()
    it = iter(new.items())
    cur = next(it, None)
    deletes: Optional[set[bytes]] = None
    for key, pv in old.items():
        if cur is None:
            node.deletes.append(key.encode())
            continue
        qkey, qv = cur
        if key != qkey:
            if deletes is None:
                deletes = set()
            deletes.add(key.encode())
            continue
        cur = next(it, None)
        if qv is not pv and not _same(pv, qv):
            _changed_value(node, key.encode(), pv, qv, ignore)
    while cur is not None:
        name = cur[0].encode()
        node.inserts.append((name, *_typed(cur[1])))
        if deletes:
            deletes.discard(name)
        cur = next(it, None)
    if deletes:
        node.deletes.extend(sorted(deletes))
    return node


def _list_diff(old: list, new: list, ignore: bool) -> _Array:
    node = _Array()
    n_pre = len(old)
    for i, qv in enumerate(new):
        if i >= n_pre:
            node.entries.append((i, _typed(qv)))
        else:
            pv = old[i]
            if qv is not pv and not _same(pv, qv):
                _changed_value(node, i, pv, qv, ignore)
    if n_pre > len(new):
        node.resize = len(new)
    return node


def _as_document(value: Any) -> Any:
    """A DBRef is a document in BSON ({$ref, $id, $db?, ...}): diff it as the raw walk sees it."""
    return dict(value.as_doc()) if isinstance(value, DBRef) else value


def _changed_value(node: Any, key: Any, pv: Any, qv: Any, ignore: bool) -> None:
    pv, qv = _as_document(pv), _as_document(qv)
    tp = type(pv)
    if tp is type(qv) and (tp is dict or tp is list):
        sub: Union[_Doc, _Array] = _dict_diff(pv, qv, ignore) if tp is dict else _list_diff(pv, qv, ignore)
        if ignore:
            _add_sub(node, key, sub)
            return
        w = _wrap(qv)
        if len(sub.encode()) < len(w) - 7:
            _add_sub(node, key, sub)
            return
    else:
        _add_update(node, key, *_typed(qv))
        return
    _add_update(node, key, w[4], w[6:-1])


def _doc_diff(pre: bytes, pre_at: int, post: bytes, post_at: int, ignore: bool) -> _Doc:
    node = _Doc()
    pre_it = elements(pre, pre_at)
    post_it = elements(post, post_at)
    deletes: set[bytes] = set()
    cur_post = next(post_it, None)
    for p_name, p_t, p_start, p_val, p_end in pre_it:
        if cur_post is None:
            node.deletes.append(p_name)
            continue
        q_name, q_t, q_start, q_val, q_end = cur_post
        if pre[p_start:p_end] == post[q_start:q_end]:
            cur_post = next(post_it, None)
            continue
        if p_name == q_name:
            _changed(node, p_name, pre, p_t, p_val, p_end, post, q_t, q_val, q_end, ignore)
            cur_post = next(post_it, None)
        else:
            deletes.add(p_name)
    while cur_post is not None:
        q_name, q_t, _, q_val, q_end = cur_post
        node.inserts.append((q_name, q_t, post[q_val:q_end]))
        deletes.discard(q_name)
        cur_post = next(post_it, None)
    node.deletes.extend(sorted(deletes))
    return node


def _changed(node: Any, key: Any, pre: bytes, p_t: int, p_val: int, p_end: int, post: bytes,
             q_t: int, q_val: int, q_end: int, ignore: bool) -> None:
    """Record a changed value: a sub-diff when both are documents or both arrays (and it pays),
    else the new value."""
    if p_t == q_t and p_t in (_OBJECT, _ARRAY):
        sub: Union[_Doc, _Array] = (_doc_diff(pre, p_val, post, q_val, ignore) if p_t == _OBJECT
                                    else _array_diff(pre, p_val, post, q_val, ignore))
        if ignore or len(sub.encode()) < q_end - q_val:
            _add_sub(node, key, sub)
            return
    _add_update(node, key, q_t, post[q_val:q_end])


def _add_sub(node: Any, key: Any, sub: Any) -> None:
    if isinstance(node, _Doc):
        node.subs.append((key, sub))
    else:
        node.entries.append((key, sub))


def _add_update(node: Any, key: Any, t: int, value: bytes) -> None:
    if isinstance(node, _Doc):
        node.updates.append((key, t, value))
    else:
        node.entries.append((key, (t, value)))


def _array_diff(pre: bytes, pre_at: int, post: bytes, post_at: int, ignore: bool) -> _Array:
    node = _Array()
    pre_it = elements(pre, pre_at)
    i = 0
    for _, q_t, _, q_val, q_end in elements(post, post_at):
        p = next(pre_it, None)
        if p is None:
            node.entries.append((i, (q_t, post[q_val:q_end])))
        else:
            # array element names are their indexes, the same on both sides: compare values
            _, p_t, _, p_val, p_end = p
            if p_t != q_t or pre[p_val:p_end] != post[q_val:q_end]:
                _changed(node, i, pre, p_t, p_val, p_end, post, q_t, q_val, q_end, ignore)
        i += 1
    if next(pre_it, None) is not None:
        node.resize = i
    return node


# --------------------------------------------------------------------------------- applying
def apply_diff(doc: dict, diff: dict) -> dict:
    """`doc` with the (decoded) document diff applied; `doc` is not changed."""
    # a decoded diff whose field map names $ref and $id (a DBRef's own fields changed) comes
    # back from BSON as a DBRef: read it as the document it is
    deletes = _as_document(diff.get("d") or {})
    updates = _as_document(diff.get("u") or {})
    inserts = _as_document(diff.get("i") or {})
    subs = {k[1:]: v for k, v in diff.items() if k[:1] == "s"}
    out: dict = {}
    for name, value in doc.items():
        if name in deletes or name in inserts:
            continue
        if name in updates:
            out[name] = updates[name]
        elif name in subs:
            out[name] = _apply_sub(value, subs[name])
        else:
            out[name] = value
    for name, value in updates.items():
        if name not in out:
            out[name] = value
    for name, value in inserts.items():
        out[name] = value
    return out


def _apply_sub(value: Any, sub: dict) -> Any:
    value = _as_document(value)
    if sub.get("a") is True:
        return apply_array_diff(value, sub) if isinstance(value, list) else value
    return apply_diff(value, sub) if isinstance(value, dict) else value


def apply_array_diff(arr: list, diff: dict) -> list:
    out = list(arr)
    if "l" in diff:
        del out[int(diff["l"]):]
    for key, value in diff.items():
        if key in ("a", "l"):
            continue
        kind, idx = key[0], int(key[1:])
        if kind == "u":
            while len(out) <= idx:
                out.append(None)
            out[idx] = value
        elif kind == "s" and idx < len(out):
            out[idx] = _apply_sub(out[idx], value)
    return out
