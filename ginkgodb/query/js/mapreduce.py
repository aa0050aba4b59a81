"""mapReduce's JavaScript half: map every document (emit), reduce each key's values, finalize.

The command (commands/map_reduce.py) selects the documents (query, sort, limit) and writes the
output; this module only runs the user's functions, as mongod's $_internalJsEmit and
$_internalJsReduce stages do: map with `this` bound to the document, reduce(key, values) over all
of a key's values (even a single one) until one value is left, finalize(key, value).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from bson.code import Code

from ginkgodb.errors import CommandError, ErrorCode

from .convert import dumps, dumps_document, loads
from .functions import JsFunction
from .operation import current
from .sandbox import ScriptError

_MAP_BATCH = 500          # documents per call into the sandbox
_BATCH_BYTES = 1 << 20


@dataclass
class MapReduceSpec:
    map: str
    reduce: str
    finalize: str | None = None
    scope: dict = field(default_factory=dict)


def function_source(name: str, v: Any) -> str:
    """map/reduce/finalize: a string or Code, as mongod's IDL accepts them."""
    if isinstance(v, Code):
        return str(v)
    if type(v) is str:
        return v
    from ginkgodb.query.expr.values import type_name
    raise CommandError(ErrorCode.TypeMismatch, f"BSON field 'mapReduce.{name}' is the wrong type "
                                               f"'{type_name(v)}', expected types '[string, javascript]'")


class MapReduce:
    """One mapReduce run inside the current operation's sandbox."""

    def __init__(self, spec: MapReduceSpec) -> None:
        self.spec = spec
        self.op = current()
        self.box = self.op.sandbox("js")
        if spec.scope:
            self.box.set_scope(dumps(spec.scope), self.op.limit())
        self.map_id = self.box.function(spec.map, self.op.limit())
        if self.map_id is None:
            raise CommandError(ErrorCode.JsFunctionFailedNoReturn, "js function failed to execute: "
                               "SyntaxError: the map function does not compile")
        self.reduce_fn = JsFunction(spec.reduce)
        self.finalize_fn = JsFunction(spec.finalize) if spec.finalize else None

    def emits(self, docs: Iterable[dict]) -> Iterator[tuple[Any, Any]]:
        """(key, value) of every emit() of map over `docs`, in order."""
        batch: list = []
        tagged: list = []
        size = 0
        for doc in docs:
            text, keys = dumps_document(doc)
            batch.append(text)
            tagged.append(keys)
            size += len(text)
            if len(batch) >= _MAP_BATCH or size >= _BATCH_BYTES:
                yield from self._map(batch, tagged)
                batch, tagged, size = [], [], 0
        if batch:
            yield from self._map(batch, tagged)

    def _map(self, batch: list[str], tagged: list[str]) -> list:
        try:
            out = self.box.map(self.map_id, "[" + ",".join(batch) + "]", orjson.dumps(tagged).decode(),
                               self.op.limit())
        except (TimeoutError, MemoryError, ScriptError) as exc:
            raise self.op.failure(exc, "no_return") from None
        return [(k, v) for k, v in loads(out)]

    def reduce(self, key: Any, values: list) -> Any:
        """mongod's reduce loop: the values (last emitted first) reduced to one."""
        return self.reduce_fn.call(None, [key, list(reversed(values))])

    def finalize(self, key: Any, value: Any) -> Any:
        if self.finalize_fn is None:
            return value
        return self.finalize_fn.call(None, [key, value])

    def run(self, docs: Iterable[dict]) -> list[dict]:
        """[{_id: key, value}] for `docs`, keys in BSON order."""
        from ginkgodb.bsonutil.keycodec import encode_key
        from ginkgodb.query.expr.values import hash_key
        groups: dict = {}
        for key, value in self.emits(docs):
            self.op.check()
            entry = groups.get(hash_key(key))
            if entry is None:
                groups[hash_key(key)] = (key, [value])
            else:
                entry[1].append(value)
        results = []
        for key, values in groups.values():
            results.append({"_id": key, "value": self.finalize(key, self.reduce(key, values))})
        results.sort(key=lambda d: encode_key([d["_id"]]))
        return results
