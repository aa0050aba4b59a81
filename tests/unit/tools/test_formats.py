"""The tools' file formats on their own: archive, BSON files, Extended JSON, namespace patterns."""
from __future__ import annotations

import datetime as dt
import io
import math
import uuid

import bson
import pytest
from bson import Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp, json_util
from bson.datetime_ms import DatetimeMS

from ginkgodb.tools import archive, bsonfile, extjson
from ginkgodb.tools.archive import ArchiveReader, ArchiveWriter, CollectionMetadata
from ginkgodb.tools.log import ToolError
from ginkgodb.tools.namespaces import Matcher, Renamer

DOCS = [{"_id": i, "x": "y" * i} for i in range(5)]


def _archive(segments=True) -> bytes:
    out = io.BytesIO()
    w = ArchiveWriter(out)
    w.prelude("7.0.14", "t", 1, [CollectionMetadata("db", "a", "{}"), CollectionMetadata("db", "b")])
    w.write("db", "a", b"".join(bson.encode(d) for d in DOCS[:3]))
    w.write("db", "b", bson.encode(DOCS[3]))
    w.write("db", "a", bson.encode(DOCS[4]))
    w.end("db", "a")
    w.end("db", "b")
    return out.getvalue()


def test_crc64_is_gos_ecma():
    assert archive.crc64(b"123456789") == 0x995DC9BBDF1939FA
    assert archive.crc64(b"6789", archive.crc64(b"12345")) == archive.crc64(b"123456789")


def test_archive_round_trip_with_interleaved_segments():
    reader = ArchiveReader(io.BytesIO(_archive()), "a.archive", batch=2)
    prelude = reader.read_prelude()
    assert prelude.header["version"] == "0.1" and prelude.header["server_version"] == "7.0.14"
    assert [(m.db, m.collection, m.metadata) for m in prelude.collections] == [
        ("db", "a", "{}"), ("db", "b", "")]
    got: dict = {}
    eofs = []
    for seg in reader.segments():
        got.setdefault(seg.collection, []).extend(bson.decode(d) for d in seg.docs)
        if seg.eof:
            eofs.append(seg.collection)
    assert got == {"a": DOCS[:3] + DOCS[4:], "b": DOCS[3:4]}
    assert eofs == ["a", "b"]


def test_archive_layout_bytes():
    data = _archive()
    assert data[:4] == bytes.fromhex("6de29981")
    assert data.endswith(archive.TERMINATOR)
    # an empty namespace is just its EOF block
    out = io.BytesIO()
    w = ArchiveWriter(out)
    w.prelude("7.0", "t", 1, [CollectionMetadata("d", "e")])
    start = out.tell()
    w.end("d", "e")
    block = out.getvalue()[start:]
    header = bson.decode(block[:-4])
    assert header == {"db": "d", "collection": "e", "EOF": True, "CRC": 0}
    assert block[-4:] == archive.TERMINATOR


def _at_first_block(data: bytes, patch: bytes) -> bytes:
    pos = data.index(archive.TERMINATOR) + 4        # the prelude's end
    return data[:pos] + patch + data[pos + len(patch):]


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b"\x00\x00\x00\x00" + b[4:], "does not appear to be a mongodump archive"),
    (lambda b: b[:-9], "unexpected end of archive"),
    (lambda b: _at_first_block(b, b"\x01\x00\x00\x00"), "offset 247: .* 1 is neither a valid bson"),
])
def test_malformed_archives_name_the_offset(mutate, message):
    with pytest.raises(ToolError, match=message) as err:
        reader = ArchiveReader(io.BytesIO(mutate(_archive())), "x.archive")
        list(reader.segments())
    assert "x.archive" in str(err.value)


def test_archive_crc_mismatch_is_refused():
    data = bytearray(_archive())
    pos = data.index(b"yy")       # inside a document of db.a
    data[pos] = ord("z")
    with pytest.raises(ToolError, match=r"CRC mismatch for namespace `db.a`"):
        list(ArchiveReader(io.BytesIO(bytes(data)), "x").segments())


def test_gzipped_archive_without_gzip_flag_says_so():
    import gzip
    with pytest.raises(ToolError, match="add --gzip"):
        ArchiveReader(io.BytesIO(gzip.compress(_archive())), "x").read_prelude()


def test_bson_file_batches_and_errors():
    data = b"".join(bson.encode(d) for d in DOCS)
    batches = list(bsonfile.batches(io.BytesIO(data), "f.bson", 2))
    assert [len(b) for b in batches] == [2, 2, 1]
    with pytest.raises(ToolError, match=r"f.bson: offset \d+: unexpected end of file"):
        list(bsonfile.batches(io.BytesIO(data[:-3]), "f.bson"))
    bad = data[:-1] + b"\x01"
    with pytest.raises(ToolError, match="do not end with a NUL"):
        list(bsonfile.batches(io.BytesIO(bad), "f.bson"))
    with pytest.raises(ToolError, match="offset 0: invalid BSON document length 2"):
        list(bsonfile.batches(io.BytesIO(b"\x02\x00\x00\x00\x00"), "f.bson"))


def test_bson_file_batches_are_bounded_in_bytes_too():
    docs = [bson.encode({"_id": i, "s": "x" * 100}) for i in range(7)]
    batches = list(bsonfile.batches(io.BytesIO(b"".join(docs)), "f.bson", 100, max_bytes=2 * len(docs[0])))
    assert [len(b) for b in batches] == [2, 2, 2, 1]
    assert [d for b in batches for d in b] == docs


def test_bson_file_count_checks_the_same_framing():
    data = b"".join(bson.encode(d) for d in DOCS)
    assert bsonfile.count(io.BytesIO(data), "f.bson") == len(DOCS)
    assert bsonfile.count(io.BytesIO(b""), "f.bson") == 0
    offset = len(data) - len(bson.encode(DOCS[-1]))
    for bad, message in ((data[:-3], f"offset {offset}: unexpected end of file"),
                         (data[:-1] + b"\x01", f"offset {offset}: corrupt BSON document"),
                         (data + b"\xff\xff\xff\xff\x00", f"offset {len(data)}: invalid BSON document "
                                                           f"length {2 ** 32 - 1}")):
        with pytest.raises(ToolError, match=message):
            bsonfile.count(io.BytesIO(bad), "f.bson")
        with pytest.raises(ToolError, match=message):
            list(bsonfile.batches(io.BytesIO(bad), "f.bson"))


VALUES = {"_id": ObjectId("65a1b2c3d4e5f60718293a4b"), "i": 7, "neg": -2 ** 31, "l": Int64(3),
          "big": 2 ** 40, "f": 1.0, "g": 0.1, "e": 1.5e300, "nz": -0.0, "s": "h\u00e9\"\n",
          "t": True, "n": None, "d": dt.datetime(2024, 7, 16, 6, 26, 18, 858000),
          "d0": dt.datetime(2024, 1, 1), "old": dt.datetime(1900, 1, 1),
          "dec": Decimal128("1.5"), "b": Binary(b"ab", 0), "u": Binary(uuid.UUID(int=5).bytes, 4),
          "r": Regex("a.b", "i"), "ts": Timestamp(1, 2), "lo": MinKey(), "hi": MaxKey(),
          "code": Code("x"), "scope": Code("y", {"k": 1}), "a": [1, {"q": [2.5, None]}],
          "sub": {"x": {"y": "z"}}}


@pytest.mark.parametrize("mode", ["relaxed", "canonical"])
def test_extjson_output_is_json_utils(mode):
    options = extjson.RELAXED if mode == "relaxed" else extjson.CANONICAL
    doc = bson.decode(bson.encode(VALUES), extjson.EXPORT_CODEC)
    ours = extjson.dumper(mode)(doc)
    theirs = json_util.dumps(doc, json_options=options, separators=(",", ":"), ensure_ascii=False)
    assert ours.decode() == theirs
    # and the text goes back to the same BSON (canonical: exactly)
    if mode == "canonical":
        assert extjson.json_to_bson(ours) == bson.encode(VALUES)


MORE_VALUES = {"_id": 1, "nan": float("nan"), "inf": float("inf"), "ninf": -math.inf, "bool": False,
               "i64small": Int64(-7), "i32max": 2 ** 31 - 1, "i32min": -2 ** 31, "i64max": Int64(2 ** 63 - 1),
               "tiny": 5e-324, "neg": -123.456, "before": dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
               "ref": DBRef("c", 5, "db", extra=2.5), "ref2": DBRef("c", ObjectId("65a1b2c3d4e5f60718293a4b")),
               "scope": Code("f", {"n": 1, "l": Int64(2), "d": 1.5, "when": dt.datetime(2020, 1, 1),
                                   "arr": [1, {"x": 2.0}]}),
               "nested": [[1, [2.0, [Int64(3)]]], {"a": {"b": {"c": -0.0}}}], "empty": {}, "none": [],
               "bin": Binary(b"\x00\xff", 128), "ts0": Timestamp(0, 0), "dec": Decimal128("-Infinity"),
               "re": Regex("^a", "imsx"), "unicode": "\u2603 \U0001f600 \x00\x1f"}


@pytest.mark.parametrize("values", [VALUES, MORE_VALUES], ids=["values", "more_values"])
def test_canonical_export_codec_gives_json_utils_text(values):
    raw = bson.encode(values)
    codec, dumps = extjson.batch_encoder("canonical")
    ours = dumps(bson.decode(raw, codec)).decode()
    theirs = json_util.dumps(bson.decode(raw, extjson.EXPORT_CODEC), json_options=extjson.CANONICAL,
                             separators=(",", ":"), ensure_ascii=False)
    assert ours == theirs
    assert extjson.json_to_bson(ours.encode()) == raw        # and back to the same bytes
    # datetimes outside Python's range too (DATETIME_AUTO gives DatetimeMS; they take json_util)
    far = bson.encode({"d": DatetimeMS(-2 ** 62), "e": DatetimeMS(2 ** 62)})
    assert dumps(bson.decode(far, codec)) == json_util.dumps(
        bson.decode(far, extjson.EXPORT_CODEC), json_options=extjson.CANONICAL, separators=(",", ":")).encode()


def test_relaxed_export_codec_gives_json_utils_text():
    raw = bson.encode({k: v for k, v in MORE_VALUES.items() if k not in ("nan", "inf", "ninf")})
    codec, dumps = extjson.batch_encoder("relaxed")
    assert dumps(bson.decode(raw, codec)).decode() == json_util.dumps(
        bson.decode(raw, extjson.EXPORT_CODEC), json_options=extjson.RELAXED, separators=(",", ":"),
        ensure_ascii=False)


def test_relaxed_non_finite_doubles_are_wrapped():
    text = extjson.dumps_relaxed({"a": float("nan"), "b": [float("inf"), None], "c": -math.inf})
    assert text == (b'{"a":{"$numberDouble":"NaN"},"b":[{"$numberDouble":"Infinity"},null],'
                    b'"c":{"$numberDouble":"-Infinity"}}')


def test_json_to_bson_refuses_non_objects():
    with pytest.raises(ValueError, match="expected a JSON object"):
        extjson.json_to_bson(b"[1, 2]")
    with pytest.raises(ValueError, match="empty document"):
        extjson.json_to_bson(b"   ")
    assert bson.decode(extjson.json_to_bson(b'{"a": 1, "b": 2147483648, "c": 1.0}')) == {
        "a": 1, "b": 2147483648, "c": 1.0}


def test_namespace_matcher_wildcards_and_escapes():
    m = Matcher(["shop.*", "a\\*b.c"])
    assert m.matches("shop.orders") and m.matches("shop.x.y")
    assert m.matches("a*b.c") and not m.matches("aXb.c") and not m.matches("shopx.y")
    with pytest.raises(ToolError, match=r"'\$' is not allowed"):
        Matcher(["a.$x$"])


def test_namespace_renamer_stars_variables_and_priority():
    r = Renamer(["shop.*", "shop.orders"], ["backup.*", "archive.old_orders"])
    assert r.rename("shop.orders") == "archive.old_orders"     # the last match wins
    assert r.rename("shop.items") == "backup.items"
    assert r.rename("other.items") == "other.items"
    v = Renamer(["$db$.user_$name$"], ["$db$_users.$name$"])
    assert v.rename("app.user_ann") == "app_users.ann"
    with pytest.raises(ToolError, match="Different number of asterisks"):
        Renamer(["a.*"], ["b.c"])
    with pytest.raises(ToolError, match="Unknown variable"):
        Renamer(["$a$.x"], ["$b$.x"])
    with pytest.raises(ToolError, match="Different number of froms and tos"):
        Renamer(["a.b"], [])


def test_bson_file_spans_ramp_up_and_read_back_the_documents(tmp_path):
    docs = [bson.encode({"_id": i, "s": "x" * (i % 13)}) for i in range(40)]
    path = tmp_path / "f.bson"
    path.write_bytes(b"".join(docs))
    with open(path, "rb") as f:
        spans = bsonfile.spans(f, "f.bson", 10, first=3)
    assert [n for _, _, n in spans] == [3, 6, 10, 10, 10, 1]
    assert spans[0][0] == 0 and spans[-1][1] == path.stat().st_size
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert [d for start, stop, _ in spans for d in bsonfile.read_span(str(path), start, stop)] == docs
    with open(path, "rb") as f:     # the byte bound ends a span as it ends a batch
        assert [n for _, _, n in bsonfile.spans(f, "f.bson", 100, max_bytes=3 * len(docs[0]),
                                                first=100)][:1] == [3]
    for bad, message in ((b"".join(docs)[:-3], "unexpected end of file"),
                         (b"\x02\x00\x00\x00\x00", "invalid BSON document length 2")):
        with pytest.raises(ToolError, match=message):
            bsonfile.spans(io.BytesIO(bad), "f.bson", 10)
    path.write_bytes(b"".join(docs)[:-3])       # changed after its check: refused, not cut short
    with pytest.raises(ToolError, match="changed while it was restored"):
        bsonfile.read_span(str(path), spans[-1][0], spans[-1][1])


def test_archive_segments_ramp_up_from_a_small_first_one():
    def segments(**kw):
        reader = ArchiveReader(io.BytesIO(_archive()), "a.archive", **kw)
        return [(s.collection, s.docs, s.eof) for s in reader.segments()]
    plain, ramped = segments(batch=1000), segments(batch=4, first=1)
    assert [len(d) for _, d, eof in ramped if not eof][:2] == [1, 2]
    assert max(len(d) for _, d, _ in ramped) <= 4

    def flat(segs):
        out: dict = {}
        for coll, docs, _ in segs:
            out.setdefault(coll, []).extend(docs)
        return out
    assert flat(ramped) == flat(plain)


def test_archive_segments_say_where_their_documents_are(monkeypatch):
    data = _archive()
    for chunk, batch, first in ((1 << 20, 1000, None), (1 << 20, 2, 1), (7, 1, None), (7, 2, 1),
                                (50, 1000, None)):
        monkeypatch.setattr(ArchiveReader, "_CHUNK", chunk)     # documents across refills too
        reader = ArchiveReader(io.BytesIO(data), "a.archive", batch=batch, first=first)
        for seg in reader.segments():
            assert data[seg.start:seg.stop] == b"".join(seg.docs)
            assert seg.eof or seg.stop > seg.start
