"""Mongoose (Node.js ODM, from npm) against `ginkgodb serve`: schemas with references and
`populate`, indexes declared on schemas and built by `Model.init()`, queries, atomic updates,
aggregation builders, GridFS through the driver Mongoose carries, and validation / duplicate-key
errors as Mongoose's own error classes. The script runs once; each test asserts on its steps."""
from __future__ import annotations

import pymongo
import pytest
from e2e.npm_tools import run_json_script

pytestmark = pytest.mark.slow

DB = "e2e_mongoose"


@pytest.fixture(scope="module")
def steps(mongoose_modules, server_uri, server_address):
    out = run_json_script(mongoose_modules, "mongoose_odm.js", server_uri, DB)
    yield out
    with pymongo.MongoClient(*server_address) as c:
        c.drop_database(DB)


def value(steps: dict, name: str):
    assert "error" not in steps[name], steps[name]
    return steps[name]["value"]


def error(steps: dict, name: str) -> dict:
    assert "error" in steps[name], steps[name]
    return steps[name]["error"]


def test_schema_indexes_built_at_init(steps):
    indexes = value(steps, "indexes")
    author = {i["name"]: i for i in indexes["author"]}
    book = {i["name"]: i for i in indexes["book"]}
    assert author["name_1"]["unique"] is True
    assert author["country_1_age_-1"]["key"] == {"country": 1, "age": -1}
    assert book["createdAt_1"]["expireAfterSeconds"] == 3600  # `expires` on a Date path: TTL
    assert book["author_1_pages_-1"]["key"] == {"author": 1, "pages": -1}


def test_sync_indexes_drops_undeclared(steps):
    assert value(steps, "syncIndexes") == {"dropped": ["stray_age"],
                                          "left": ["_id_", "country_1_age_-1", "name_1"]}


def test_populate_references(steps):
    assert value(steps, "populate") == {"author": "ann", "reviewers": ["bob", "cy"]}
    assert value(steps, "populateSelectMatch") == [{"name": "bob"}]  # select + match on the refs
    assert value(steps, "populateVirtual") == ["Gamma", "Alpha"]     # virtual, sorted by pages
    assert value(steps, "documentPopulate") == "bob"
    assert value(steps, "nestedPopulate") == [["Alpha", ["bob", "cy"]], ["Gamma", []]]


def test_queries(steps):
    assert value(steps, "sortSkipLimit") == ["Alpha"]
    assert value(steps, "selectInclude") == ["_id", "pages", "title"]
    assert value(steps, "selectExclude") == ["_id", "author", "createdAt", "pages", "status", "tags",
                                             "title"]
    assert value(steps, "in") == 2
    assert value(steps, "regex") == ["Alpha", "Beta"]  # the pre('save') hook capitalised titles
    assert value(steps, "whereChain") == ["Alpha", "Beta"]
    assert value(steps, "countDocuments") == 2
    assert value(steps, "estimatedDocumentCount") == 3
    assert value(steps, "distinct") == ["x", "y", "z"]
    assert value(steps, "exists") is True
    assert value(steps, "elemMatch") == 1
    assert value(steps, "cursor") == ["Alpha", "Beta", "Gamma"]
    assert value(steps, "discriminator") == {"clicks": 1, "events": 2, "kind": "Click"}
    assert value(steps, "explain") == {"returned": 1, "plan": True}
    assert value(steps, "collation") == ["ann"]


def test_positional_projection(steps):
    assert value(steps, "positionalProjection") == [{"title": "two", "words": 20}]


def test_atomic_updates(steps):
    assert value(steps, "incPushSet") == {"modified": 1, "pages": 105, "tags": ["x", "y", "w"],
                                          "status": "published"}
    assert value(steps, "pull") == ["y", "w"]
    assert value(steps, "positionalUpdate") == [{"title": "one", "words": 10},
                                                {"title": "two", "words": 25}]
    assert value(steps, "updateMany") == 2
    assert value(steps, "upsert") == {"upserted": True, "age": 50}
    assert value(steps, "findOneAndUpdate") == 41
    assert value(steps, "findOneAndUpdateUpsert") == {"name": "eve", "age": 18}
    assert value(steps, "documentSave") == 23
    assert value(steps, "bulkWrite") == {"modified": 1, "deleted": 1, "inserted": 1}
    assert value(steps, "findOneAndDelete") == "delta"  # bulkWrite inserts skip save hooks
    assert value(steps, "arrayFilters") == [110, 25]
    assert value(steps, "pushEachSortSlice") == ["a", "ann", "b"]
    assert value(steps, "findOneAndReplace") == ["age", "name", 51]


def test_optimistic_concurrency_and_timestamps(steps):
    assert value(steps, "optimisticConcurrency") == {"conflict": {"name": "VersionError"}, "n": 2,
                                                     "version": 1, "timestamps": True}


def test_capped_collection_from_schema(steps):
    assert value(steps, "cappedCollection") == {"kept": [2, 3, 4], "capped": True, "max": 3}


def test_aggregation_helpers(steps):
    assert value(steps, "aggregateBuilder") == [  # ann's books' tags after the updates above
        {"_id": "a", "n": 1}, {"_id": "ann", "n": 2}, {"_id": "b", "n": 1}, {"_id": "w", "n": 1},
        {"_id": "y", "n": 1}]
    assert value(steps, "aggregateLookup") == [{"name": "ann", "n": 2}]
    [facet] = value(steps, "aggregateFacet")
    assert sorted(facet["byStatus"], key=lambda g: g["_id"]) == [{"_id": "draft", "count": 1},
                                                                 {"_id": "published", "count": 1}]
    assert facet["pages"] == [{"_id": None, "total": 156}]


def test_gridfs_bucket(steps):
    assert value(steps, "gridfs") == {"length": 5000, "chunkSize": 1024, "metadata": {"owner": "ann"},
                                      "same": True, "chunksStored": 5, "chunksAfterDelete": 0,
                                      "filesAfterDelete": 0}


def test_validation_errors_are_mongoose_errors(steps):
    assert error(steps, "validationError")["errors"] == {"name": "maxlength", "email": "regexp",
                                                          "age": "min"}
    assert error(steps, "validationError")["name"] == "ValidationError"
    assert error(steps, "requiredError")["errors"] == {"author": "required", "title": "required"}
    assert error(steps, "enumError")["errors"] == {"status": "enum"}
    assert error(steps, "updateValidator")["errors"] == {"age": "min"}  # runValidators on update
    cast = error(steps, "castError")
    assert (cast["name"], cast["kind"], cast["path"]) == ("CastError", "ObjectId", "_id")


def test_duplicate_key_errors(steps):
    dup = error(steps, "duplicateKey")
    assert (dup["name"], dup["code"], dup["keyValue"]) == ("MongoServerError", 11000, {"name": "ann"})
    assert "E11000 duplicate key error collection: e2e_mongoose.authors index: name_1" in dup["message"]
    assert value(steps, "insertManyUnordered") == {"name": "MongoBulkWriteError", "code": 11000,
                                                   "inserted": 1, "writeErrors": 2}
