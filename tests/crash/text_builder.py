"""A process for the background text build crash test: loads documents, creates a text index
with `textIndexBuild: "background"` and keeps writing while the builder works; the builder
prints "midway" once some chunks are committed and goes on, slowed, until the process is
killed."""
from __future__ import annotations

import sys
import time

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine, text_build

WORDS = ["red car", "blue tea", "green car", "old shoes"]
DOCS = 12_000
MIDWAY = 10          # chunks committed before "midway" is printed
PACE = 0.02          # seconds between later chunks: the build outlasts the test's kill


def _told_midway(step):
    """build_step, and the builder itself says when it is midway: a look from another thread
    raced the build, which on a loaded machine once finished first ("finished too soon")."""
    steps = 0

    def paced(*args, **kwargs):
        nonlocal steps
        more = step(*args, **kwargs)
        steps += 1
        if steps == MIDWAY:
            print("midway" if more else "finished too soon", flush=True)
        elif steps > MIDWAY:
            time.sleep(PACE)
        return more
    return paced


def main(path: str) -> None:
    text_build.CHUNK = 20   # many small chunks: the kill lands in the middle of the build
    text_build.build_step = _told_midway(text_build.build_step)
    engine = Engine.open(path)
    ctx = CommandContext(engine=engine)
    docs = [{"_id": i, "title": f"item {i} {WORDS[i % 4]}"} for i in range(DOCS)]
    for i in range(0, len(docs), 500):
        assert dispatch(ctx, {"insert": "c", "documents": docs[i:i + 500], "$db": "crash"})["ok"] == 1.0
    reply = dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "t",
                                                               "textIndexBuild": "background"}], "$db": "crash"})
    assert reply["ok"] == 1.0, reply
    i = DOCS
    while True:   # writes during the build: inserts and updates of records not indexed yet
        dispatch(ctx, {"insert": "c", "documents": [{"_id": i, "title": "new car"}], "$db": "crash"})
        dispatch(ctx, {"update": "c", "updates": [{"q": {"_id": i % DOCS}, "u": {"$set": {"title": "car"}}}],
                       "$db": "crash"})
        i += 1


if __name__ == "__main__":
    main(sys.argv[1])
