"""The house: no import circle anywhere in ginkgodb (function-level imports included), and
each layer reached only through its face where the seams say so (docs/design/seams.md)."""
from __future__ import annotations

import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[2] / "ginkgodb"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _face_names(package: str) -> set[str]:
    """Names a package's __init__ binds (imported, defined or assigned) at its top level."""
    path = MODULES.get(package)
    if path is None or path.name != "__init__.py":
        return set()
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def imports_of(name: str) -> set[str]:
    path = MODULES[name]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            mod = _resolve(name, is_package, node.level, node.module) if node.level else (node.module or "")
            if not mod.startswith("ginkgodb"):
                continue
            face = _face_names(mod)
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                found.add(sub if sub in MODULES and alias.name not in face else mod)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ginkgodb"):
                    found.add(alias.name)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports_of(name) for name in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    # A package's face importing its submodules is an edge like any other: a submodule that
    # imports its own package face back makes a circle and is reported.
    assert _cycles() == []


def test_commands_reach_the_engine_only_through_its_face():
    deep = sorted((m, dep) for m, deps in GRAPH.items() if m.startswith("ginkgodb.commands")
                  for dep in deps if dep.startswith("ginkgodb.engine."))
    assert deep == []


def test_front_ends_reach_commands_and_engine_only_through_their_faces():
    deep = sorted((m, dep) for m, deps in GRAPH.items()
                  if m.startswith(("ginkgodb.server", "ginkgodb.client", "ginkgodb.tools", "ginkgodb.cli"))
                  for dep in deps if dep.startswith(("ginkgodb.commands.", "ginkgodb.engine.")))
    assert deep == []
