"""What a pipeline needs from its surroundings: other collections, `let` values and the time."""
from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ginkgodb.query.external_sort import Spill

DocsSource = Callable[[str, str, "dict | None"], Iterable[dict]]


@dataclass
class PipelineContext:
    """Supplied by the engine for one aggregate command.

    `collection_docs(db, coll, filter)` yields a collection's documents (the filter is a hint the
    source may apply; every document returned is still matched). `variables` are the command's
    `let` values; `now` fixes $$NOW for the whole command. `spill` says whether the blocking
    stages ($sort, $group) may write to disk past their memory limits (allowDiskUse), and where.
    """

    db: str = "test"
    variables: dict[str, Any] = field(default_factory=dict)
    now: datetime.datetime | None = None
    source: DocsSource | None = None
    collection: str | None = None
    spill: Spill = field(default_factory=lambda: Spill.for_request(None))

    def collection_docs(self, db: str, coll: str, filter: dict | None = None) -> Iterable[dict]:
        if self.source is None:
            return ()
        return self.source(db, coll, filter)

    def run_variables(self) -> dict[str, Any]:
        """The variable dict every expression of one run sees ($$NOW fixed once)."""
        from ginkgodb.query.expr.compiler import now_millis_utc
        out = dict(self.variables)
        out["NOW"] = self.now or now_millis_utc()
        return out
