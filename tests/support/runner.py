"""Running commands against an engine in tests."""
from __future__ import annotations

import bson
from bson.raw_bson import RawBSONDocument

from ginkgodb.commands import CommandContext, dispatch


def decode_all(value):
    """RawBSONDocuments in a reply, decoded (recursively) for assertions."""
    if isinstance(value, RawBSONDocument):
        return bson.decode(value.raw)
    if isinstance(value, dict):
        return {k: decode_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_all(v) for v in value]
    return value


class Runner:
    def __init__(self, engine, db: str = "test") -> None:
        self.ctx = CommandContext(engine=engine)
        self.db = db

    def raw(self, cmd: dict) -> dict:
        cmd = dict(cmd)
        cmd.setdefault("$db", self.db)
        return decode_all(dispatch(self.ctx, cmd))

    def __call__(self, cmd: dict) -> dict:
        reply = self.raw(cmd)
        assert reply["ok"] == 1.0, reply
        return reply

    def error(self, cmd: dict) -> dict:
        reply = self.raw(cmd)
        assert reply["ok"] == 0.0, reply
        return reply

    def insert(self, coll: str, *docs, **kw) -> dict:
        return self({"insert": coll, "documents": list(docs), **kw})

    def find(self, coll: str, filter=None, **kw) -> list:
        reply = self({"find": coll, "filter": filter or {}, "batchSize": 100000, **kw})
        return reply["cursor"]["firstBatch"]

    def explain(self, coll: str, filter=None, verbosity="executionStats", **kw) -> dict:
        return self({"explain": {"find": coll, "filter": filter or {}, **kw}, "verbosity": verbosity})


def run_without_engine(cmd: dict, server=None, **ctx_fields) -> dict:
    """dispatch for commands that need no storage, against `admin` unless `$db` says otherwise."""
    ctx = CommandContext(engine=None, server=server, **ctx_fields)
    return dispatch(ctx, {**cmd, "$db": cmd.get("$db", "admin")})
