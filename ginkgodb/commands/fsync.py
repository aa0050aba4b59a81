"""fsync and fsyncUnlock: flush to disk, and lock writes out (for file-copy backups).

`{fsync: 1, lock: true}` (what mongosh's db.fsyncLock() sends) waits for the write in flight,
flushes, and holds every later write until as many fsyncUnlock as there were locks: writes wait
(interruptibly: maxTimeMS and killOp end the wait), reads go on. mongod has no `fsyncLock`
command (it is a shell helper), so neither does ginkgodb.
"""
from __future__ import annotations

from bson.int64 import Int64

from .context import CommandContext
from .declare import Args, boolean, command, ignored, on_cluster
from .replies import ErrmsgOnlyFailure

FSYNC_URL = "http://dochub.mongodb.org/core/fsynccommand"


@command("fsync", help=FSYNC_URL, admin_only=True,
         fields=(boolean("lock"),
                 ignored("fsyncLockAcquisitionTimeoutMillis",
                         "the lock waits only for the one write batch in flight, which always finishes"),
                 ignored("allowFsyncFailure", "a test-only field of mongod; a failed flush is always an error here")),
         privileges=(on_cluster("fsync"),))
def fsync(ctx: CommandContext, args: Args) -> dict:
    if not args.lock:
        ctx.engine.sync()
        return {"numFiles": 1}  # mongod keeps this dummy field for old clients
    count = ctx.engine.fsync_lock()
    return {"info": "now locked against writes, use db.fsyncUnlock() to unlock",
            "lockCount": Int64(count), "seeAlso": FSYNC_URL}


@command("fsyncUnlock", help="Unlock writes locked by fsync with lock: true (one lock per call)",
         admin_only=True, inline=True, privileges=(on_cluster("unlock"),))
def fsync_unlock(ctx: CommandContext, args: Args) -> dict:
    left = ctx.engine.fsync_unlock()
    if left is None:
        raise ErrmsgOnlyFailure("fsyncUnlock called when not locked")
    return {"info": "fsyncUnlock completed", "lockCount": Int64(left)}
