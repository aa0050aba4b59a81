"""A process for the background text build crash test: loads documents, creates a text index
with `textIndexBuild: "background"` and keeps writing while the builder works; prints
"midway" once some chunks are committed, and goes on until it is killed."""
from __future__ import annotations

import sys

from ginkgodb.commands import CommandContext, dispatch
from ginkgodb.engine import Engine, text_build

WORDS = ["red car", "blue tea", "green car", "old shoes"]
DOCS = 12_000


def main(path: str) -> None:
    text_build.CHUNK = 20   # many small chunks: the kill lands in the middle of the build
    engine = Engine.open(path)
    ctx = CommandContext(engine=engine)
    # enough documents that the build outlasts a loaded machine's pause of this thread: with 3,000
    # the whole build once finished before the first look at its state (CI at 2 workers)
    docs = [{"_id": i, "title": f"item {i} {WORDS[i % 4]}"} for i in range(DOCS)]
    for i in range(0, len(docs), 500):
        assert dispatch(ctx, {"insert": "c", "documents": docs[i:i + 500], "$db": "crash"})["ok"] == 1.0
    reply = dispatch(ctx, {"createIndexes": "c", "indexes": [{"key": {"title": "text"}, "name": "t",
                                                               "textIndexBuild": "background"}], "$db": "crash"})
    assert reply["ok"] == 1.0, reply
    i = 10_000
    told = False
    while True:   # writes during the build: inserts and updates of records not indexed yet
        if not told:
            index = engine.catalog.collection("crash", "c").index("t")
            state = text_build.state_of(index.meta)
            if state is None or state["done"] >= 200:   # some chunks committed, most to come
                print("midway" if state is not None else "finished too soon", flush=True)
                told = True
        dispatch(ctx, {"insert": "c", "documents": [{"_id": i, "title": "new car"}], "$db": "crash"})
        dispatch(ctx, {"update": "c", "updates": [{"q": {"_id": i % DOCS}, "u": {"$set": {"title": "car"}}}],
                       "$db": "crash"})
        i += 1


if __name__ == "__main__":
    main(sys.argv[1])
