"""Buckets in format v1 (docs/design/timeseries.md, DO NOT CHANGE a written version):
building one from measurements, adding to it, and choosing the bucket a measurement goes to.

A bucket: `{_id: ObjectId(<rounded min time> + random), control: {version: 1, min: {...},
max: {...}}, meta: <metaField value, absent when the measurement had none>, data: {<field>:
{"0": v, "1": v, ...}}}`. A measurement's position in the time column is its number.
"""
from __future__ import annotations

import datetime
import struct
from dataclasses import dataclass, field
from typing import Any, Optional

import bson
from bson.objectid import ObjectId

from ...bsonutil import keycodec
from ...bsonutil.compare import compare
from ...bsonutil.sentinels import ABSENT
from ...errors import CommandError, ErrorCode
from ...query.pipeline.unpack_bucket import unpack

FORMAT_VERSION = 1
MAX_COUNT = 1000                 # mongod's timeseriesBucketMaxCount
MAX_SIZE = 125 * 1024            # mongod's timeseriesBucketMaxSize
_OVERHEAD = 200                  # control, _id and meta, counted once per bucket
_EPOCH = datetime.datetime(1970, 1, 1)


def meta_key(meta: Any) -> bytes:
    """Buckets group measurements whose meta values encode equal (b"" when there is none)."""
    return b"" if meta is ABSENT else b"\x01" + keycodec.encode_key((meta,))


def _seconds(t: datetime.datetime) -> int:
    naive = t.replace(tzinfo=None) - (t.utcoffset() or datetime.timedelta()) if t.tzinfo else t
    return int((naive - _EPOCH).total_seconds() // 1)


def round_down(t: datetime.datetime, rounding: int) -> datetime.datetime:
    """A bucket's minimum time: its first measurement's time rounded down to bucketRoundingSeconds."""
    secs = _seconds(t)
    return _EPOCH + datetime.timedelta(seconds=secs - secs % rounding)


def bucket_id(min_time: datetime.datetime) -> ObjectId:
    """The bucket's _id: its minimum time as the ObjectId's timestamp, the rest unique."""
    return ObjectId(struct.pack(">I", _seconds(min_time) & 0xFFFFFFFF) + ObjectId().binary[4:])


def check_time(doc: dict, time_field: str) -> datetime.datetime:
    """The measurement's time as a naive UTC datetime (how bson decodes it), or mongod's error."""
    t = doc.get(time_field)
    if not isinstance(t, datetime.datetime):
        raise CommandError(ErrorCode.BadValue,
                           f"'{time_field}' must be present and contain a valid BSON UTC datetime value")
    if t.tzinfo is not None:
        t = t.replace(tzinfo=None) - (t.utcoffset() or datetime.timedelta())
    return t


_PLAIN = (int, str)


def _less(a: Any, b: Any) -> bool:
    """a < b in MongoDB's order; values of one plain type compare natively (str by code points,
    which is UTF-8 byte order; floats unless NaN; naive UTC datetimes)."""
    ta = type(a)
    if ta is type(b):
        if ta in _PLAIN or (ta is float and a == a and b == b):
            return a < b
        if ta is datetime.datetime and a.tzinfo is None and b.tzinfo is None:
            return a < b
    return compare(a, b) < 0


@dataclass
class Bucket:
    """One bucket as a batch sees it: its document, and the stored one it replaces (rid None:
    not stored yet)."""

    doc: dict
    rid: Optional[int] = None
    old: Optional[dict] = None
    old_raw: Optional[bytes] = None
    count: int = 0
    size: int = _OVERHEAD
    added: int = 0
    dirty: bool = False

    @property
    def min_time(self) -> datetime.datetime:
        return self.doc["control"]["min"][self.time_field]

    time_field: str = field(default="", repr=False)

    def add(self, measurement: dict, size: int) -> None:
        control, data = self.doc["control"], self.doc["data"]
        lo, hi = control["min"], control["max"]
        key = str(self.count)
        for name, v in measurement.items():
            data.setdefault(name, {})[key] = v
            low, high = lo.get(name, ABSENT), hi.get(name, ABSENT)
            if low is ABSENT or _less(v, low):
                lo[name] = v
            if high is ABSENT or _less(high, v):
                hi[name] = v
        self.count += 1
        self.size += size
        self.added += 1
        self.dirty = True


def new_bucket(meta: Any, time_field: str, t: datetime.datetime, rounding: int) -> Bucket:
    start = round_down(t, rounding)
    doc: dict = {"_id": bucket_id(start),
                 "control": {"version": FORMAT_VERSION, "min": {time_field: start}, "max": {}}}
    if meta is not ABSENT:
        doc["meta"] = meta
    doc["data"] = {}
    bucket = Bucket(doc, time_field=time_field)
    return bucket


def stored_bucket(rid: int, doc: dict, raw: bytes, time_field: str) -> Bucket:
    """A stored bucket as a batch may fill it (a full one, never changed, shares the decoded
    document with its old image)."""
    count = len(doc.get("data", {}).get(time_field, {}))
    working = _working_copy(doc) if count < MAX_COUNT else doc
    return Bucket(working, rid, doc, raw, count, len(raw), 0, False, time_field)


def _working_copy(doc: dict) -> dict:
    """A copy that `Bucket.add` may change without touching `doc`: adding only sets keys of
    `control.min`, `control.max` and the columns, so those dicts are copied and values shared
    (a deep copy of a full bucket costs ~100x more)."""
    out = dict(doc)
    control = dict(doc["control"])
    control["min"], control["max"] = dict(control["min"]), dict(control["max"])
    out["control"] = control
    out["data"] = {name: dict(column) for name, column in doc.get("data", {}).items()}
    return out


def rebuild(doc: dict, measurements: list[dict], time_field: str, meta_field: Optional[str],
            rounding: int) -> dict:
    """A bucket holding `measurements` (a delete or update removed some): the same _id and meta,
    control and columns computed again, numbered from 0."""
    start = doc["control"]["min"][time_field]
    bucket = Bucket({"_id": doc["_id"], "control": {"version": FORMAT_VERSION, "min": {time_field: start},
                                                    "max": {}},
                     **({"meta": doc["meta"]} if "meta" in doc else {}), "data": {}}, time_field=time_field)
    for m in measurements:
        bucket.add({k: v for k, v in m.items() if k != meta_field}, 0)
    return bucket.doc


def measurements_of(doc: dict, time_field: str, meta_field: Optional[str]) -> list[dict]:
    return list(unpack(doc, time_field, meta_field))


def encoded_size(measurement: dict) -> int:
    return len(bson.encode(measurement))
