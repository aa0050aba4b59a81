"""The application names a member's own connections to the other members carry (mongod's
internal clients). failCommand fail points skip their commands unless `failInternalCommands` is
set, as mongod's do: otherwise a test's one-shot fail point on getMore is spent by a secondary's
oplog tailing instead of the client's change stream."""
from __future__ import annotations

HEARTBEAT = "ginkgodb-heartbeat"
OPLOG_SYNC = "ginkgodb-oplog-sync"
INTERNAL = frozenset({HEARTBEAT, OPLOG_SYNC})
