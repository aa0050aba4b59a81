"""The embedded client vouches for the documents it encodes itself (bsonutil.checked.vouch_encoded),
so the engine stores them without decoding them again: it must vouch exactly where `check_one`,
the decode it replaces, would, with the same `_id` key, and the stored result must be the same
as through the checked path."""
from __future__ import annotations

import bson
import bson.errors
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.timestamp import Timestamp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ginkgodb.bsonutil.checked import CheckedRaw, check_one, vouch_encoded
from tests.strategies import FIELD_NAMES, bson_values

IDS = st.one_of(st.binary(min_size=12, max_size=12).map(ObjectId), st.integers(-2**63, 2**63 - 1),
                st.text(max_size=6), st.floats(allow_nan=False), st.booleans(), st.integers(0, 9).map(Int64),
                st.builds(Timestamp, st.integers(0, 9), st.integers(0, 9)), st.none(),
                st.dictionaries(st.sampled_from("ab"), st.integers(0, 3), max_size=2))
DOCS = st.builds(lambda fields, with_id, id_value: {**fields, **({"_id": id_value} if with_id else {})},
                 st.dictionaries(FIELD_NAMES.filter(lambda k: k != "_id" and "\x00" not in k),
                                 bson_values(), max_size=6),
                 st.booleans(), IDS)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(DOCS, st.integers(0, 1200))
def test_vouched_where_the_decode_would_be_with_the_same_key(doc, padding):
    if padding:
        doc = {**doc, "pad": "x" * padding}   # around the shallow-size boundary
    try:
        raw = bson.encode(doc)
    except (bson.errors.InvalidDocument, OverflowError):
        assume(False)
    got = vouch_encoded(raw, doc)
    assert type(got) in (CheckedRaw, RawBSONDocument) and bytes(got.raw) == raw
    if type(got) is CheckedRaw:
        assert got.id_key == check_one(raw)       # vouched: check_one agrees, key for key


def test_what_is_not_vouched():
    oid = ObjectId()
    assert type(vouch_encoded(bson.encode({"_id": oid, "a": 1}), {"_id": oid, "a": 1})) is CheckedRaw
    for doc in ({"a": 1}, {"_id": True}, {"_id": Int64(1)}, {"_id": {"x": 1}},
                {"_id": oid, "t": Timestamp(0, 0)}, {"_id": oid, "t": Timestamp(5, 1)},
                {"_id": oid, "big": "x" * 800},
                {"_id": oid, "a": [{"d": DatetimeMS(-62135596800001)}]},     # the engine cannot decode it
                {"_id": oid, "ref": {"r": DBRef("c", 1, d=DatetimeMS(253402300800000))}}):
        assert type(vouch_encoded(bson.encode(doc), doc)) is RawBSONDocument, doc
    edge = {"_id": oid, "d": DatetimeMS(253402300799999), "e": DatetimeMS(-62135596800000)}
    assert type(vouch_encoded(bson.encode(edge), edge)) is CheckedRaw     # the range's own ends decode


def test_inserts_are_stored_as_through_the_checks(tmp_path):
    """insert_one and insert_many give the same stored documents and errors whether or not the
    client vouches (a collection with only `_id`, and one with a secondary index)."""
    from bson.codec_options import CodecOptions, TypeEncoder, TypeRegistry
    from pymongo.errors import DuplicateKeyError, WriteError

    import ginkgodb

    class Zero:  # encoded by a custom encoder: the client cannot vouch, the engine fills it in
        pass

    class ZeroEncoder(TypeEncoder):
        python_type = Zero

        def transform_python(self, value):
            return Timestamp(0, 0)

    client = ginkgodb.MongoClient(str(tmp_path))
    plain = client.t.get_collection("plain")
    custom = client.t.get_collection("custom", codec_options=CodecOptions(type_registry=TypeRegistry([ZeroEncoder()])))
    indexed = client.t.get_collection("indexed")
    indexed.create_index("a")
    oid = ObjectId()
    for coll in (plain, indexed):
        coll.insert_one({"_id": oid, "a": 1})
        coll.insert_many([{"_id": i, "a": i} for i in range(5)])
        try:
            coll.insert_one({"_id": oid})
        except DuplicateKeyError as exc:
            assert exc.code == 11000 and "dup key" in str(exc)
        else:
            raise AssertionError("a duplicate _id was accepted")
        try:
            coll.insert_one({"_id": "x" * 600})   # vouched for, but a key beyond the index's limit
        except WriteError as exc:
            assert exc.code == 17280 and "too large to index" in str(exc)
        else:
            raise AssertionError("a key too large to index was accepted")
        assert coll.count_documents({}) == 6 and coll.find_one({"_id": oid}) == {"_id": oid, "a": 1}
    custom.insert_one({"_id": 1, "t": Zero()})
    stamped = client.t.custom.find_one({"_id": 1})["t"]
    assert isinstance(stamped, Timestamp) and stamped.time > 0     # filled in by the server


#: bytes that make dates and false dates: type bytes, NULs, the range's edges
_DATE_BYTES = st.lists(st.one_of(st.sampled_from([b"\x09", b"\x00", b"\x10", b"\x02", b"\xff", b"\x7f", b"\x80",
                                                  b"\xe0", b"\xdf", b"a"]),
                                 st.integers(-2**63, 2**63 - 1).map(lambda v: v.to_bytes(8, "little", signed=True)),
                                 st.sampled_from([v.to_bytes(8, "little", signed=True) for v in
                                                  (-62_135_596_800_000, -62_135_596_800_001, 253_402_300_799_999,
                                                   253_402_300_800_000, 2**47 - 1, 2**47, -2**45, -2**45 - 1)])),
                       max_size=24).map(b"".join)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(min_size=5, max_size=80), _DATE_BYTES))
def test_the_date_search_answers_as_the_walk_for_any_bytes(raw):
    """Whatever bytes it is given (a false date at the very end included), the search in C
    and the walk it spares answer the same: the search finds every place the walk refuses."""
    from ginkgodb.bsonutil.checked import _dates_decodable, _dates_walked
    assert _dates_decodable(raw) is _dates_walked(raw)
