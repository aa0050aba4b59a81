"""Error codes are `ErrorCode` members everywhere, and every member replies mongod's codeName.

The scan parses each module of ginkgodb/ with `ast`. A *sink* is an exception that takes a code
(CommandError, WriteError, the wire's ProtocolError); a *code-forwarding helper* is any function
with a parameter that reaches a sink's code (directly, through local names, tuples or other
helpers); helpers are found by a fixpoint over the whole package, so a new one is checked
without being listed here. At every call of a sink or helper, and in every default value of a
code parameter, the code expression must not contain an int literal (or a name, tuple, dict or
conditional that evaluates to one): only `ErrorCode.X` or values that already carry a code.
"""
from __future__ import annotations

import ast
import pathlib
import re
from dataclasses import dataclass, field

from ginkgodb.errors import LOCATION_CODES, ErrorCode, code_name

PKG = pathlib.Path(__file__).resolve().parents[2] / "ginkgodb"

#: exception classes that take the error code as their first argument, parameter `code`:
#: (module that defines it, class name)
SINKS = {("ginkgodb.errors", "CommandError"), ("ginkgodb.errors", "WriteError"),
         ("ginkgodb.wire.errors", "ProtocolError")}


@dataclass
class _Func:
    module: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    is_method: bool
    params: list[str]   # positional parameters, in order
    code_params: set[str] = field(default_factory=set)


@dataclass
class _Module:
    name: str
    path: pathlib.Path
    tree: ast.Module
    funcs: dict[str, list[_Func]] = field(default_factory=dict)   # by simple name
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # alias -> (module, name)
    modules: dict[str, str] = field(default_factory=dict)   # alias -> module (from . import x)
    sinks: set[str] = field(default_factory=set)   # local names bound to a SINKS class


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve_from(mod: _Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.name.split(".")
    if mod.path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _load() -> dict[str, _Module]:
    mods: dict[str, _Module] = {}
    for path in sorted(PKG.rglob("*.py")):
        mod = _Module(_module_name(path), path, ast.parse(path.read_text(), str(path)))
        mods[mod.name] = mod
    for mod in mods.values():
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.ImportFrom):
                src = _resolve_from(mod, node)
                for alias in node.names:
                    local = alias.asname or alias.name
                    if f"{src}.{alias.name}" in mods:
                        mod.modules[local] = f"{src}.{alias.name}"
                    else:
                        mod.imported[local] = (src, alias.name)
                        if (src, alias.name) in SINKS:
                            mod.sinks.add(local)
        mod.sinks |= {n.name for n in mod.tree.body
                      if isinstance(n, ast.ClassDef) and (mod.name, n.name) in SINKS}
        _collect_funcs(mod, mod.tree, in_class=False)
    return mods


def _collect_funcs(mod: _Module, node: ast.AST, in_class: bool) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = child.args
            params = [p.arg for p in a.posonlyargs + a.args]
            is_method = in_class and bool(params) and params[0] in ("self", "cls")
            func = _Func(mod.name, child, is_method, params)
            mod.funcs.setdefault(child.name, []).append(func)
            _collect_funcs(mod, child, in_class=False)
        elif isinstance(child, ast.ClassDef):
            _collect_funcs(mod, child, in_class=True)
        else:
            _collect_funcs(mod, child, in_class)


def _callees(mods: dict[str, _Module], mod: _Module, call: ast.Call) -> list[tuple[_Func, int]]:
    """Functions a call may reach, each with the offset of its first positional argument."""
    f = call.func
    if isinstance(f, ast.Name):
        if f.id in mod.funcs:
            return [(fn, 0) for fn in mod.funcs[f.id] if not fn.is_method]
        if f.id in mod.imported:
            src, name = mod.imported[f.id]
            target = mods.get(src)
            if target is not None:
                return [(fn, 0) for fn in target.funcs.get(name, []) if not fn.is_method]
        return []
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        if f.value.id in ("self", "cls"):
            return [(fn, 1) for fn in mod.funcs.get(f.attr, []) if fn.is_method]
        if f.value.id in mod.modules:
            target = mods[mod.modules[f.value.id]]
            return [(fn, 0) for fn in target.funcs.get(f.attr, []) if not fn.is_method]
    return []


def _code_args(mods, mod, call: ast.Call) -> list[ast.expr]:
    """The argument expressions of `call` that land in an error code."""
    out = []
    if isinstance(call.func, ast.Name) and call.func.id in mod.sinks:
        if call.args and not isinstance(call.args[0], ast.Starred):
            out.append(call.args[0])
        out += [k.value for k in call.keywords if k.arg == "code"]
    for fn, offset in _callees(mods, mod, call):
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                break
            j = i + offset
            if j < len(fn.params) and fn.params[j] in fn.code_params:
                out.append(arg)
        out += [k.value for k in call.keywords if k.arg in fn.code_params]
    return out


def _names_in(expr: ast.AST) -> set[str]:
    """Names whose value may become part of `expr`'s value (not indices, not call arguments)."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, ast.Subscript):
        return _names_in(expr.value)
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute) and f.attr == "get":
            return _names_in(f.value) | set().union(*(_names_in(a) for a in expr.args[1:]))
        return set()
    if isinstance(expr, (ast.Attribute, ast.Constant, ast.Lambda, ast.JoinedStr, ast.Compare)):
        return set()
    if isinstance(expr, ast.IfExp):
        return _names_in(expr.body) | _names_in(expr.orelse)
    out: set[str] = set()
    for child in ast.iter_child_nodes(expr):
        if isinstance(child, ast.expr):
            out |= _names_in(child)
    return out


def _target_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _unpack(target: ast.AST, value: ast.expr, out: dict[str, list[ast.expr]]) -> None:
    """Bind the names of `target` to (the matching parts of) `value`."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) \
            and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
        for t, v in zip(target.elts, value.elts):
            _unpack(t, v, out)
        return
    for name in _target_names(target):
        out.setdefault(name, []).append(value)


def _bindings(scope: ast.AST) -> dict[str, list[ast.expr]]:
    """name -> the expressions assigned to it in `scope` (a for-loop over a literal binds its
    target to each element)."""
    out: dict[str, list[ast.expr]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _unpack(t, node.value, out)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value:
            _unpack(node.target, node.value, out)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            items = node.iter.elts if isinstance(node.iter, (ast.Tuple, ast.List, ast.Set)) \
                else [node.iter]
            for item in items:
                _unpack(node.target, item, out)
    return out


def _enclosing(tree: ast.Module) -> dict[ast.AST, list[ast.AST]]:
    """node -> its enclosing function scopes, innermost first, then the module."""
    out: dict[ast.AST, list[ast.AST]] = {}

    def visit(node: ast.AST, scopes: list[ast.AST]) -> None:
        for child in ast.iter_child_nodes(node):
            out[child] = scopes
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, [child] + scopes)
            else:
                visit(child, scopes)

    visit(tree, [tree])
    return out


def _find_code_params(mods: dict[str, _Module]) -> None:
    changed = True
    while changed:
        changed = False
        for mod in mods.values():
            for funcs in mod.funcs.values():
                for fn in funcs:
                    flowing: set[str] = set()
                    for node in ast.walk(fn.node):
                        if isinstance(node, ast.Call):
                            for arg in _code_args(mods, mod, node):
                                flowing |= _names_in(arg)
                    binds = _bindings(fn.node)
                    todo = list(flowing)
                    while todo:
                        for value in binds.get(todo.pop(), []):
                            new = _names_in(value) - flowing
                            flowing |= new
                            todo += new
                    params = set(fn.params) - {"self", "cls"}
                    params |= {p.arg for p in fn.node.args.kwonlyargs}
                    found = flowing & params
                    if not found <= fn.code_params:
                        fn.code_params |= found
                        changed = True


def _is_error_code(expr: ast.expr) -> bool:
    return (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id == "ErrorCode")


def _raw_ints(expr: ast.expr, scopes: list[ast.AST], bind_cache: dict, seen: set) -> list[ast.Constant]:
    """Int literals that `expr` may evaluate to (or carry inside a tuple/dict) as a code."""
    if _is_error_code(expr):
        return []
    if isinstance(expr, ast.Constant):
        ok = not isinstance(expr.value, int) or isinstance(expr.value, bool)
        return [] if ok else [expr]
    if isinstance(expr, ast.Name):
        if (expr.id, id(scopes[0])) in seen:
            return []
        seen.add((expr.id, id(scopes[0])))
        for i, scope in enumerate(scopes):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = scope.args
                if expr.id in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}:
                    return []   # a parameter: checked where the function is called
            if scope not in bind_cache:
                bind_cache[scope] = _bindings(scope)
            values = bind_cache[scope].get(expr.id)
            if values:
                return [c for v in values for c in _raw_ints(v, scopes[i:], bind_cache, seen)]
        return []
    if isinstance(expr, ast.Subscript):
        return _raw_ints(expr.value, scopes, bind_cache, seen)
    if isinstance(expr, ast.Call):
        f = expr.func
        if isinstance(f, ast.Attribute) and f.attr == "get":
            parts = [f.value] + list(expr.args[1:])
            return [c for p in parts for c in _raw_ints(p, scopes, bind_cache, seen)]
        return []
    if isinstance(expr, ast.Dict):
        return [c for v in expr.values for c in _raw_ints(v, scopes, bind_cache, seen)]
    if isinstance(expr, ast.IfExp):
        return (_raw_ints(expr.body, scopes, bind_cache, seen)
                + _raw_ints(expr.orelse, scopes, bind_cache, seen))
    if isinstance(expr, (ast.Attribute, ast.Lambda, ast.JoinedStr, ast.Compare)):
        return []
    out = []
    for child in ast.iter_child_nodes(expr):
        if isinstance(child, ast.expr):
            out += _raw_ints(child, scopes, bind_cache, seen)
    return out


def raw_codes() -> list[tuple[pathlib.Path, ast.Constant, str]]:
    """Every int literal used as an error code: (module path, literal node, where it is used)."""
    mods = _load()
    _find_code_params(mods)
    found: dict[tuple[pathlib.Path, int, int], tuple[pathlib.Path, ast.Constant, str]] = {}
    for mod in mods.values():
        scopes_of = _enclosing(mod.tree)
        cache: dict = {}
        checks: list[tuple[ast.expr, list[ast.AST], str]] = []
        for node in ast.walk(mod.tree):
            if isinstance(node, ast.Call):
                for arg in _code_args(mods, mod, node):
                    checks.append((arg, scopes_of[node], ast.unparse(node.func)))
        for funcs in mod.funcs.values():
            for fn in funcs:
                a = fn.node.args
                positional = a.posonlyargs + a.args
                for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults):
                    if p.arg in fn.code_params:
                        checks.append((d, scopes_of[fn.node], f"default of {fn.node.name}"))
                for p, d in zip(a.kwonlyargs, a.kw_defaults):
                    if d is not None and p.arg in fn.code_params:
                        checks.append((d, scopes_of[fn.node], f"default of {fn.node.name}"))
        for expr, scopes, where in checks:
            for c in _raw_ints(expr, scopes, cache, set()):
                found[(mod.path, c.lineno, c.col_offset)] = (mod.path, c, where)
    return sorted(found.values(), key=lambda t: (str(t[0]), t[1].lineno, t[1].col_offset))


def test_no_bare_integer_is_used_as_an_error_code():
    bad = [f"{path.relative_to(PKG.parent)}:{c.lineno}: {c.value} passed to {where}"
           for path, c, where in raw_codes()]
    assert not bad, "use ErrorCode members, not numbers:\n" + "\n".join(bad)


def test_the_scan_sees_helpers_and_literals(tmp_path, monkeypatch):
    """The scanner itself finds literals through helpers, tuples, names and defaults."""
    pkg = tmp_path / "ginkgodb"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "h.py").write_text(
        "from .errors import CommandError\n"
        "def fail(msg, code=2):\n"
        "    return CommandError(code, msg)\n"
        "def pair(spec, codes):\n"
        "    a, b = codes\n"
        "    raise fail('x', a if spec else b)\n")
    (pkg / "errors.py").write_text("class CommandError(Exception): ...\n")
    (pkg / "use.py").write_text(
        "from .h import fail, pair\n"
        "from .errors import CommandError, ErrorCode\n"
        "N = 7\n"
        "def f(x):\n"
        "    raise CommandError(ErrorCode.BadValue, 'fine')\n"
        "def g(x):\n"
        "    pair(x, (11, 12))\n"
        "    code = 13 if x else ErrorCode.BadValue\n"
        "    raise CommandError(code, 'm')\n"
        "def h():\n"
        "    raise fail('m', N)\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["PKG"]), "PKG", pkg)
    values = sorted(c.value for _, c, _ in raw_codes())
    assert values == [2, 7, 11, 12, 13]


def test_each_named_member_replies_its_own_name():
    for member in ErrorCode:
        if member in LOCATION_CODES:
            continue
        assert code_name(member) == member.name, member


def test_each_location_member_replies_location_and_its_number():
    assert LOCATION_CODES, "the assertion locations are members too"
    for member in LOCATION_CODES:
        assert code_name(member) == f"Location{member.value}", member
        assert not re.fullmatch(r"Location\d+", member.name), "name what failed, not the number"


def test_numbers_without_a_member_still_reply_location():
    assert code_name(424242) == "Location424242"


def test_no_two_members_share_a_number():
    values = [m.value for m in ErrorCode.__members__.values()]
    assert len(values) == len(set(values)), "aliases would hide a codeName"
