"""A transaction writer for the crash tests: each transaction moves one unit between accounts and
records a ledger entry; it prints the ledger id once the commit is acknowledged, then gets killed."""
from __future__ import annotations

import random
import sys
import uuid

from bson.binary import Binary
from bson.int64 import Int64

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine

ACCOUNTS = 10


def main(path: str, start: int) -> None:
    engine = Engine.open(path)
    ctx = CommandContext(engine=engine)
    if start == 0:
        docs = [{"_id": i, "balance": 100} for i in range(ACCOUNTS)]
        assert dispatch(ctx, {"insert": "accounts", "documents": docs, "$db": "bank"})["ok"] == 1.0
        print(-1, flush=True)
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    rng = random.Random()
    seq, number = start, 0
    while True:
        number += 1
        src, dst = rng.sample(range(ACCOUNTS), 2)
        fields = {"lsid": lsid, "txnNumber": Int64(number), "autocommit": False, "$db": "bank"}
        steps = [
            {"update": "accounts", "updates": [{"q": {"_id": src}, "u": {"$inc": {"balance": -1}}}],
             "startTransaction": True},
            {"update": "accounts", "updates": [{"q": {"_id": dst}, "u": {"$inc": {"balance": 1}}}]},
            {"insert": "ledger", "documents": [{"_id": seq, "from": src, "to": dst, "pad": "x" * 500}]},
        ]
        for step in steps:
            reply = dispatch(ctx, {**step, **fields})
            assert reply["ok"] == 1.0 and "writeErrors" not in reply, reply
        reply = dispatch(ctx, {"commitTransaction": 1, **fields, "$db": "admin"})
        assert reply["ok"] == 1.0, reply
        print(seq, flush=True)
        seq += 1


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
