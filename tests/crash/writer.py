"""A writer process for the crash tests: acknowledges each write on stdout, then gets killed."""
from __future__ import annotations

import sys

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine


def main(path: str, start: int) -> None:
    engine = Engine.open(path)
    ctx = CommandContext(engine=engine)
    reply = dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1", "unique": True},
                                                               {"key": {"tags": 1}, "name": "tags_1"}],
                           "$db": "crash"})
    assert reply["ok"] == 1.0, reply
    i = start
    while True:
        docs = [{"_id": i + j, "k": f"key{i + j}", "tags": [i + j, -(i + j)], "pad": "x" * 200} for j in range(10)]
        reply = dispatch(ctx, {"insert": "c", "documents": docs, "$db": "crash"})
        assert reply["ok"] == 1.0 and reply["n"] == 10, reply
        reply = dispatch(ctx, {"update": "counter", "updates": [{"q": {"_id": 1}, "u": {"$set": {"n": i + 10}},
                                                                   "upsert": True}], "$db": "crash"})
        assert reply["ok"] == 1.0, reply
        # churn that leaves the documents as they were, for the oplog: an update and a delete
        reply = dispatch(ctx, {"update": "c", "updates": [{"q": {"_id": i}, "u": {"$push": {"tags": "t"}}}],
                               "$db": "crash"})
        assert reply["ok"] == 1.0, reply
        reply = dispatch(ctx, {"update": "c", "updates": [{"q": {"_id": i}, "u": {"$pop": {"tags": 1}}}],
                               "$db": "crash"})
        assert reply["ok"] == 1.0, reply
        print(i + 9, flush=True)  # every _id up to here is acknowledged, and the counter reached i+10
        i += 10


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
