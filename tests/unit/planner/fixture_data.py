"""Planner fixture files: YAML cases with BSON values, turned into pytest parameters.

Each file under `fixtures/` is a list of cases `{name, ..., expect, xfail?}`. A case whose
`xfail` gives a reason expects mongod's answer where the planner disagrees today: it runs as
`pytest.mark.xfail(strict=True)`, so fixing the planner turns it into a failure to un-mark.

YAML has no BSON types, so a few tags stand for them:
`!minkey`, `!maxkey`, `!oid <hex>`, `!date <ms since the epoch>`, `!long <n>`,
`!decimal <text>`, `!regex <pattern>` or `!regex [<pattern>, <flags>]`. `.nan`/`.inf` are
YAML's own floats.
"""
from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pytest
import yaml
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex

from ginkgodb.engine.catalog import IndexMeta

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
_EPOCH = datetime.datetime(1970, 1, 1)


class _Loader(yaml.SafeLoader):
    """SafeLoader plus the BSON tags above."""


def _scalar_tag(tag: str, build) -> None:
    _Loader.add_constructor(tag, lambda loader, node: build(loader.construct_scalar(node)))


def _regex(loader: yaml.SafeLoader, node: yaml.Node) -> Regex:
    if isinstance(node, yaml.SequenceNode):
        pattern, flags = loader.construct_sequence(node)
        return Regex(pattern, flags)
    return Regex(loader.construct_scalar(node))


_scalar_tag("!minkey", lambda _: MinKey())
_scalar_tag("!maxkey", lambda _: MaxKey())
_scalar_tag("!oid", lambda text: ObjectId(text))
_scalar_tag("!date", lambda ms: _EPOCH + datetime.timedelta(milliseconds=int(ms)))
_scalar_tag("!long", lambda n: Int64(int(n)))
_scalar_tag("!decimal", lambda text: Decimal128(text))
_Loader.add_constructor("!regex", _regex)


def load(name: str) -> list[dict]:
    """The cases of fixtures/<name>.yaml, with unique names."""
    with open(FIXTURES / f"{name}.yaml", encoding="utf-8") as f:
        cases = yaml.load(f, Loader=_Loader)
    names = [c["name"] for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"{name}.yaml: duplicate case names {sorted(duplicates)}"
    return cases


def params(name: str) -> list:
    """pytest parameters for fixtures/<name>.yaml: ids are case names, `xfail` marks strict."""
    out = []
    for case in load(name):
        marks = [pytest.mark.xfail(strict=True, reason=case["xfail"])] if case.get("xfail") else []
        out.append(pytest.param(case, id=case["name"], marks=marks))
    return out


def default_name(key: dict) -> str:
    """mongod's default index name: fields and directions joined by underscores."""
    return "_".join(f"{field}_{direction}" for field, direction in key.items())


def index_meta(position: int, spec: dict[str, Any]) -> IndexMeta:
    """A catalog IndexMeta from a fixture's `{name?, key, options?, multikey?}`."""
    key = dict(spec["key"])
    return IndexMeta(position + 1, spec.get("name") or default_name(key), key,
                     dict(spec.get("options") or {}), set(spec.get("multikey") or ()))
