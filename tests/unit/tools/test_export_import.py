"""export and import through --dbpath: exact canonical round trips, CSV/TSV typed columns, modes."""
from __future__ import annotations

import json

import bson
import bson.raw_bson
import pytest
from bson import Decimal128, Int64

from ginkgodb import MongoClient

from .conftest import raw_docs, seed


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "src"
    seed(str(path))
    return path


def test_canonical_export_import_round_trip_is_exact(tool, src, tmp_path):
    out, dst = tmp_path / "people.json", tmp_path / "dst"
    _, err = tool("export", "--dbpath", src, "-d", "shop", "-c", "people", "--jsonFormat",
                  "canonical", "--out", out)
    assert "exported 3000 records" in err
    first = json.loads(out.read_text().splitlines()[0])
    assert first["age"] == {"$numberInt": "0"} and first["big"] == {"$numberLong": "0"}
    _, err = tool("import", "--dbpath", dst, "-d", "shop", "-c", "people", "--file", out)
    assert "3000 document(s) imported successfully. 0 document(s) failed to import." in err
    a, b = MongoClient(str(src)), MongoClient(str(dst))
    assert raw_docs(a.shop.people) == raw_docs(b.shop.people)


def test_relaxed_export_query_sort_skip_limit_fields(tool, src):
    out, _ = tool("export", "--dbpath", src, "-d", "shop", "-c", "people", "--query",
                  '{"age": {"$lt": 3}}', "--sort", '{"_id": -1}', "--skip", "1", "--limit", "3",
                  "--fields", "name,at")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [d["_id"] for d in lines] == [2971, 2970, 2882]
    assert lines[0] == {"_id": 2971, "name": "p2971", "at": {"$date": "2024-01-01T00:49:31Z"}}


def test_json_array_and_pretty_round_trip(tool, src, tmp_path):
    out, dst = tmp_path / "a.json", tmp_path / "dst"
    tool("export", "--dbpath", src, "-d", "other", "-c", "things", "--jsonArray", "--pretty",
         "--out", out)
    assert json.loads(out.read_text()) == [{"_id": "x", "v": 1}]
    tool("import", "--dbpath", dst, "-c", "things", "--jsonArray", "--file", out)
    assert MongoClient(str(dst)).test.things.find_one() == {"_id": "x", "v": 1}
    # without --jsonArray the pretty-printed, multi-line document is read too
    pretty = tmp_path / "p.json"
    tool("export", "--dbpath", src, "-d", "other", "-c", "things", "--pretty", "--out", pretty)
    assert pretty.read_text().count("\n") > 2
    tool("import", "--dbpath", dst, "-c", "p", "--file", pretty)
    assert MongoClient(str(dst)).test.p.find_one() == {"_id": "x", "v": 1}


def test_csv_export_values(tool, src):
    out, _ = tool("export", "--dbpath", src, "-d", "shop", "-c", "people", "--type", "csv",
                  "--fields", "_id,name,score,big,dec,at,tags,none,missing,tags.1.b", "--limit", "2")
    lines = out.splitlines()
    assert lines[0] == "_id,name,score,big,dec,at,tags,none,missing,tags.1.b"
    assert lines[2] == ('1,p1,0.14285714285714285,1000000000000,1.25,2024-01-01T00:00:01.000Z,'
                        '"[""a"",{""b"":1}]",,,1')
    _, err = tool("export", "--dbpath", src, "-d", "shop", "-c", "people", "--type", "csv",
                  expect=1)
    assert "CSV mode requires a field list" in err


@pytest.mark.parametrize("kind, sep", [("csv", ","), ("tsv", "\t")])
def test_typed_columns(tool, tmp_path, kind, sep):
    header = sep.join(["name.string()", "age.int32()", "n.int64()", "w.double()", "d.decimal()",
                       "ok.boolean()", "born.date(2006-01-02)", "at.date_go(2006-01-02T15:04:05Z07:00)",
                       "ms.date_ms(yyyy-MM-dd HH:mm)", "ora.date_oracle(DD-MON-YYYY)",
                       "bin.binary(hex)", "zip.string()", "addr.city.auto()"])
    row = sep.join(["ann", "31", "7", "2.5", "1.10", "true", "2024-02-03", "2024-02-03T04:05:06+02:00",
                    "2024-02-03 10:30", "03-FEB-2024", "0aff", "01234", "Paris"])
    path = tmp_path / f"t.{kind}"
    path.write_text(header + "\n" + row + "\n")
    dst = tmp_path / "dst"
    tool("import", "--dbpath", dst, "--type", kind, "--headerline", "--columnsHaveTypes",
         "--file", path)
    doc = MongoClient(str(dst)).test["t"].find_one({}, {"_id": 0})
    import datetime as dt
    assert doc == {"name": "ann", "age": 31, "n": 7, "w": 2.5, "d": Decimal128("1.10"), "ok": True,
                   "born": dt.datetime(2024, 2, 3), "at": dt.datetime(2024, 2, 3, 2, 5, 6),
                   "ms": dt.datetime(2024, 2, 3, 10, 30), "ora": dt.datetime(2024, 2, 3),
                   "bin": b"\x0a\xff", "zip": "01234", "addr": {"city": "Paris"}}
    raw_doc = MongoClient(str(dst)).test.t.with_options(
        codec_options=bson.CodecOptions(document_class=bson.raw_bson.RawBSONDocument)).find_one()
    assert b"\x12n\x00" in raw_doc.raw        # element type 0x12: int64
    assert b"\x10age\x00" in raw_doc.raw      # element type 0x10: int32


def test_untyped_csv_guesses_like_mongoimport_and_ignore_blanks(tool, tmp_path):
    path = tmp_path / "u.csv"
    path.write_text('a,b,c,d\n1,2.5,x,\n3000000000,"q,r",,\n4,5,6,7,8\n')
    dst = tmp_path / "dst"
    tool("import", "--dbpath", dst, "--type", "csv", "--headerline", "--ignoreBlanks", "--file", path)
    docs = list(MongoClient(str(dst)).test.u.find({}, {"_id": 0}))
    assert docs == [{"a": 1, "b": 2.5, "c": "x"}, {"a": 3000000000, "b": "q,r"},
                    {"a": 4, "b": 5, "c": 6, "d": 7, "field4": 8}]
    assert isinstance(docs[1]["a"], Int64)


def test_bad_lines_are_reported_and_the_rest_imported(tool, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"_id": 1}\n{"_id": 2,,}\n[3]\n{"_id": 4}\n')
    dst = tmp_path / "dst"
    _, err = tool("import", "--dbpath", dst, "-c", "b", "--file", path, expect=1)
    assert "bad.json:2: invalid JSON:" in err and "bad.json:3: expected a JSON object" in err
    assert "2 document(s) imported successfully. 2 document(s) failed to import." in err
    assert [d["_id"] for d in MongoClient(str(dst)).test.b.find()] == [1, 4]
    # with --stopOnError the whole file is parsed first: nothing is written
    _, err = tool("import", "--dbpath", dst, "-c", "c", "--file", path, "--stopOnError", expect=1)
    assert "Failed: " in err and "bad.json:2:" in err
    assert "c" not in MongoClient(str(dst)).test.list_collection_names()
    typed = tmp_path / "typed.csv"
    typed.write_text("n.int32()\n1\nx\n")
    _, err = tool("import", "--dbpath", dst, "--type", "csv", "--headerline", "--columnsHaveTypes",
                  "--file", typed, expect=1)
    assert "typed.csv:3: field 'n' (int32)" in err


def test_duplicates_continue_and_modes(tool, tmp_path):
    dst = tmp_path / "dst"
    first = tmp_path / "first.json"
    first.write_text('{"_id": 1, "a": 1, "k": "x"}\n{"_id": 2, "a": 2, "k": "y"}\n')
    tool("import", "--dbpath", dst, "-c", "m", "--file", first)
    _, err = tool("import", "--dbpath", dst, "-c", "m", "--file", first)
    assert "continuing through error: E11000" in err
    assert "0 document(s) imported successfully. 2 document(s) failed to import." in err
    change = tmp_path / "change.json"
    change.write_text('{"_id": 1, "b": 10}\n{"_id": 3, "b": 30}\n')
    tool("import", "--dbpath", dst, "-c", "m", "--file", change, "--mode", "merge")
    coll = MongoClient(str(dst)).test.m
    assert list(coll.find().sort("_id", 1)) == [{"_id": 1, "a": 1, "k": "x", "b": 10},
                                                {"_id": 2, "a": 2, "k": "y"}, {"_id": 3, "b": 30}]
    tool("import", "--dbpath", dst, "-c", "m", "--file", change, "--mode", "upsert")
    assert coll.find_one({"_id": 1}) == {"_id": 1, "b": 10}
    keyed = tmp_path / "keyed.json"
    keyed.write_text('{"k": "y", "a": 20}\n')
    tool("import", "--dbpath", dst, "-c", "m", "--file", keyed, "--mode", "upsert",
         "--upsertFields", "k")
    assert coll.find_one({"_id": 2}) == {"_id": 2, "k": "y", "a": 20}
    _, err = tool("import", "--dbpath", dst, "-c", "m", "--file", keyed, "--mode", "delete",
                  "--upsertFields", "k")
    assert "1 document(s) deleted successfully" in err
    assert coll.count_documents({}) == 2
    _, err = tool("import", "--dbpath", dst, "-c", "m", "--file", keyed, "--drop",
                  "--numInsertionWorkers", "2")
    assert coll.count_documents({}) == 1


def test_argument_rules(tool, tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{}\n")
    _, err = tool("import", "--dbpath", tmp_path / "d", "--file", path, "--headerline", expect=1)
    assert "cannot use --headerline when input type is JSON" in err
    _, err = tool("import", "--dbpath", tmp_path / "d", "--file", path, "--type", "csv", expect=1)
    assert "must specify --fields, --fieldFile or --headerline" in err
    _, err = tool("import", "--dbpath", tmp_path / "d", "--file", path, "--upsertFields", "a",
                  expect=1)
    assert "cannot use --upsertFields with --mode=insert" in err
