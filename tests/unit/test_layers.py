"""Layers depend one way: storage <- query <- planner <- engine <- commands <- client | server;
tools sit on the client."""
from __future__ import annotations

import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[2] / "ginkgodb"

#: top-level modules every layer may import (the imports check below looks at packages only);
#: they import nothing of ginkgodb themselves
GROUND_FLOOR = ("errors", "limits", "version")

# package -> packages it may import (besides itself, the GROUND_FLOOR modules and the top-level
# package)
ALLOWED = {
    "bsonutil": set(),
    "storage": {"bsonutil"},
    "query": {"bsonutil"},
    "planner": {"bsonutil", "query"},
    "engine": {"bsonutil", "storage", "query", "planner"},
    "repl": {"bsonutil", "engine"},   # replication: between engine and commands
    "commands": {"bsonutil", "storage", "query", "planner", "engine", "repl"},
    "wire": set(),
    "server": {"wire", "commands", "engine", "storage", "bsonutil", "repl"},
    "client": {"commands", "engine", "bsonutil", "storage"},
    "tools": {"client", "bsonutil", "advisor"},   # a front end: pymongo-shaped clients only
    "advisor": set(),                  # a front end too: it is handed a pymongo-shaped client
    # the sharding router: above commands (their declarations), never the engine (docs/design/sharding.md)
    "router": {"wire", "commands", "query", "bsonutil", "repl"},
}


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    rel = path.relative_to(PKG).parts
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[:-1])[: len(rel) - node.level]
                parts = base + (node.module.split(".") if node.module else [])
                if not parts and node.module is None:
                    parts = [a.name for a in node.names]
                if parts:
                    found.add(parts[0])
                elif node.level > 0 and not base:
                    found.update(a.name for a in node.names)
            elif node.module and node.module.startswith("ginkgodb."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ginkgodb."):
                    found.add(alias.name.split(".")[1])
    return found


def test_each_layer_imports_only_the_layers_below_it():
    violations = []
    for layer, allowed in ALLOWED.items():
        for path in (PKG / layer).rglob("*.py"):
            for dep in _imports(path):
                if dep in ALLOWED and dep != layer and dep not in allowed:
                    violations.append(f"{path.relative_to(PKG)} imports ginkgodb.{dep}")
    assert not violations, "\n".join(sorted(violations))


def test_ground_floor_modules_import_nothing_of_ginkgodb():
    found = {name: _imports(PKG / f"{name}.py") for name in GROUND_FLOOR}
    assert not any(found.values()), found
