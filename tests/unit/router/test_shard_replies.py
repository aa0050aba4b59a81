"""Reading a shard's raw reply without inflating it: the numbers the targeted-read path
checks (`ok`, `code`, `cursor.id`), absent or non-numeric fields as None."""
from __future__ import annotations

import bson
from bson.int64 import Int64

from ginkgodb.router.shards import peek


def test_peek_reads_numbers_at_a_path_of_the_raw_reply():
    ok = bson.encode({"cursor": {"firstBatch": [{"_id": 1}], "id": Int64(0), "ns": "db.c"}, "ok": 1.0})
    assert peek(ok, b"ok") == 1.0 and peek(ok, b"cursor", b"id") == 0
    assert peek(ok, b"code") is None and peek(ok, b"cursor", b"ns") is None
    assert peek(ok, b"ok", b"x") is None and peek(ok, b"cursor", b"missing") is None
    open_cursor = bson.encode({"cursor": {"nextBatch": [], "id": Int64(1 << 40), "ns": "db.c"}, "ok": 1})
    assert peek(open_cursor, b"cursor", b"id") == 1 << 40 and peek(open_cursor, b"ok") == 1
    failed = bson.encode({"ok": 0.0, "errmsg": "stale", "code": 13388, "codeName": "StaleConfig"})
    assert peek(failed, b"ok") == 0.0 and peek(failed, b"code") == 13388
