"""Reading command fields: database and collection names (the IDL-style helpers in params.py)."""
from __future__ import annotations

from support.runner import Runner


def test_invalid_names(run):
    assert run.error({"insert": "", "documents": [{}]})["code"] == 73
    assert run.error({"insert": "a$b", "documents": [{}]})["code"] == 73
    bad_db = Runner(run.ctx.engine, db="a.b")
    assert bad_db.error({"insert": "c", "documents": [{}]})["code"] == 73


def test_first_field_names_the_collection(run):
    err = run.error({"count": 5})
    assert (err["code"], err["codeName"], err["errmsg"]) == (73, "InvalidNamespace", "collection name has invalid type int")
