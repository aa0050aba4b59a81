"""Declared commands: every field a command accepts, and what the rest of the server needs to
know about it, in one declaration beside its handler (FerretDB's handler style).

A declaration lists each field as accepted (parsed into `Args`), ignored (mongod ignores it
here, with the reason) or unimplemented (238 NotImplemented before anything runs). Generic
fields are declared once in `generic.py`. `dispatch` parses with the declaration, so a handler
receives typed `Args` and never sees an undeclared field; `explain` reuses the same parse.
"""
from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from ..errors import CommandError, ErrorCode
from . import fields as P
from .fail_points import FAIL_POINTS

Handler = Callable[[Any, "Args"], dict]
Reader = Callable[[Mapping, str, str], Any]  # (command document, field, command name) -> value


class Use(enum.Enum):
    ACCEPTED = "accepted"
    IGNORED = "ignored"              # accepted and without effect here, for the stated reason
    UNIMPLEMENTED = "unimplemented"  # refused with 238 before the command runs


class Target(enum.Enum):
    """What the command's first field holds."""
    COLLECTION = "collection"        # a collection name (string)
    COLLECTION_OR_ONE = "collection or 1"  # a collection name, or 1 for database-level
    VALUE = "value"                  # anything: the handler reads `args.value`


@dataclass(frozen=True)
class Field:
    name: str
    read: Optional[Reader] = None
    required: bool = False
    default: Any = None
    use: Use = Use.ACCEPTED
    reason: str = ""
    #: the value types `read` returns unchanged and never refuses: a prepared parse takes such
    #: values as they are (CommandSpec.parse)
    passes: tuple[type, ...] = ()
    #: a cheaper reader for the types in `passes_checked` (a prepared parse uses it)
    checked: Optional[Reader] = None
    passes_checked: tuple[type, ...] = ()

    @property
    def attr(self) -> str:
        return _snake(self.name)


@functools.cache
def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# -- field constructors -------------------------------------------------------------------------
def doc(name: str, default: Any = None, *, required: bool = False) -> Field:
    return Field(name, lambda cmd, f, c: P.get_doc(cmd, f, command=c), required, default, passes=(dict,))


def integer(name: str, default: Any = None, *, minimum: Optional[int] = None, required: bool = False) -> Field:
    def read(cmd: Mapping, f: str, c: str) -> Any:
        return P.get_int(cmd, f, None, command=c, minimum=minimum)

    if minimum is None:
        return Field(name, read, required, default, passes=(int,))

    def at_least(cmd: Mapping, f: str, c: str) -> Any:   # an int: only its bound to check
        v = cmd[f]
        return v if v >= minimum else read(cmd, f, c)
    return Field(name, read, required, default, checked=at_least, passes_checked=(int,))


def boolean(name: str, default: bool = False) -> Field:
    return Field(name, lambda cmd, f, c: P.get_bool(cmd, f, default, command=c), False, default, passes=(bool,))


def string(name: str, default: Optional[str] = None, *, required: bool = False) -> Field:
    return Field(name, lambda cmd, f, c: P.get_str(cmd, f, command=c), required, default, passes=(str,))


def array(name: str, default: Any = None, *, required: bool = False) -> Field:
    return Field(name, lambda cmd, f, c: P.get_array(cmd, f, command=c), required, default, passes=(list,))


def value(name: str, default: Any = None, *, required: bool = False) -> Field:
    """Any BSON value, decoded (the handler validates it)."""
    return Field(name, lambda cmd, f, c: P.plain(cmd.get(f)), required, default)


def let() -> Field:
    return Field("let", lambda cmd, f, c: P.get_let(cmd))


def ignored(name: str, reason: str) -> Field:
    return Field(name, use=Use.IGNORED, reason=reason)


def unimplemented(name: str, reason: str = "") -> Field:
    return Field(name, use=Use.UNIMPLEMENTED, reason=reason)


# -- privileges (used by authorization) ---------------------------------------------------------
@dataclass(frozen=True)
class Privilege:
    """Actions on a resource: the collection of the command, its database, or the cluster."""

    resource: str                    # "collection" | "database" | "cluster" | "user" | "inner"
    actions: tuple[str, ...]


#: any authenticated user may run it (on their own sessions, cursors or transactions)
ANY_USER = Privilege("user", ())
#: the privileges of the command it wraps (explain)
OF_INNER_COMMAND = Privilege("inner", ())


def on_collection(*actions: str) -> Privilege:
    return Privilege("collection", actions)


def on_database(*actions: str) -> Privilege:
    return Privilege("database", actions)


def on_cluster(*actions: str) -> Privilege:
    return Privilege("cluster", actions)


# -- the declaration ----------------------------------------------------------------------------
InlinePolicy = Union[bool, Callable[[Mapping, Any], bool]]
ApiPolicy = Union[bool, Callable[[Mapping], bool]]


class Layout:
    """A command layout's prepared parse (CommandSpec.parse): what a repeated command with these
    field names and value types reads, and the names. One object per layout, hashed by identity,
    so what is kept per layout (a find's query statistics: engine/query_stats.py) is found by it
    without hashing the names again."""

    __slots__ = ("reads", "names")

    def __init__(self, reads: tuple, names: tuple[str, ...]) -> None:
        self.reads = reads      # (field, attribute, reader or None) per accepted field sent
        self.names = names      # every field name sent, in order


class Args:
    """A command's parsed fields (snake_case attributes), its database and target."""

    layout: Optional[Layout] = None   # its layout's prepared parse (set by CommandSpec.parse)

    def __init__(self, cmd: Mapping, name: str, db: str) -> None:
        self.cmd = cmd          # the command document as received
        self.name = name        # the command name as sent (aliases included)
        self.db = db
        self.coll: Optional[str] = None
        self.value: Any = None  # the first field's value

    # Declared fields are set by CommandSpec.parse; reading any other raises AttributeError. The
    # __getattr__ is for the type checker only: at run time a class with one sends every
    # attribute read through a slower slot (about 1,000 instructions per find).
    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any: ...

    def __repr__(self) -> str:
        declared = {k: v for k, v in vars(type(self)).items() if not k.startswith("__")}
        fields = {k: v for k, v in {**declared, **self.__dict__}.items() if k != "cmd"}
        return f"Args({fields})"


@dataclass
class CommandSpec:
    name: str
    handler: Handler
    help: str
    fields: dict[str, Field]
    target: Target = Target.VALUE
    aliases: tuple[str, ...] = ()
    admin_only: bool = False
    write: bool = False                   # counts as a write (opcounters)
    open_fields: str = ""                 # non-empty: any other field is accepted, for this reason
    inline: InlinePolicy = False          # may the server run it on its event loop?
    privileges: tuple[Privilege, ...] = ()
    requires_auth: bool = True
    api_version_1: ApiPolicy = False      # part of the Stable API v1 (apiStrict)
    write_concern: bool = False           # accepts writeConcern
    explain: Optional[Callable[[Any, Args, str], dict]] = None
    test_only: bool = False               # exists only with enableTestCommands (as mongod's)

    def __post_init__(self) -> None:
        # what parse needs, worked out once: every command runs through it
        accepted = [f for f in self.fields.values() if f.use is Use.ACCEPTED]
        #: the parsed arguments' class: the declared defaults are its attributes, so a parse sets
        #: only what was sent instead of filling every instance with every default
        self._args_type = type(f"Args[{self.name}]", (Args,), {f.attr: f.default for f in accepted})
        #: name -> (attribute, reader, accepted, field): parse's one lookup per field sent
        self._by_name = {f.name: (f.attr, f.read, f.use is Use.ACCEPTED, f) for f in self.fields.values()}
        # parse skips the command's own field when no declaration names it
        assert not {self.name, *self.aliases} & self._by_name.keys(), f"{self.name} declares its own field"
        self._required = [f for f in accepted if f.required]
        #: layout (name, field names, value types) -> its prepared parse
        self._prepared: dict[tuple, Layout] = {}

    def parse(self, cmd: Mapping, name: Optional[str] = None) -> Args:
        """Check every field against the declaration and read the accepted ones. A command whose
        field names and value types were parsed before takes the prepared path: the same
        declaration, worked out once for that layout (`_prepare`), so a repeated command reads
        only what its values can change."""
        name = name or self.name
        layout = (name, tuple(cmd), tuple(map(type, cmd.values())))
        prepared = self._prepared.get(layout)
        if prepared is None:
            return self._parse(cmd, name, layout)
        args = self._args_type(cmd, name, P.database(cmd))
        values = args.__dict__
        args.layout = prepared
        for key, attr, read in prepared.reads:
            if read is None:
                values[attr] = cmd[key]
            else:
                v = read(cmd, key, name)
                if v is not None:
                    values[attr] = v
        return self._target(cmd, name, args)

    def _parse(self, cmd: Mapping, name: str, layout: tuple) -> Args:
        generic = _generic_fields()
        db = P.database(cmd)
        args = self._args_type(cmd, name, db)
        values = args.__dict__
        by_name, open_fields = self._by_name, self.open_fields
        reads: list[tuple[str, str, Optional[Reader]]] = []   # the prepared path: (field, attribute, reader or None)
        for key in cmd:  # one pass over what was sent, in its order (as mongod's IDL parser)
            found = by_name.get(key)
            if found is None:   # the command's own field (no declaration names it), or generic
                if key == name or open_fields or key in generic:
                    continue
                raise CommandError(ErrorCode.IDLUnknownField, f"BSON field '{name}.{key}' is an unknown field.")
            attr, read, accepted, f = found
            if not accepted:
                if f.use is Use.UNIMPLEMENTED:
                    raise CommandError(ErrorCode.NotImplemented,
                                       f"{name} with '{f.name}' is not supported by ginkgodb"
                                       + (f": {f.reason}" if f.reason else ""))
                continue
            raw = cmd[key]
            if raw is None and not f.required:
                continue
            kind = type(raw)
            if read is None or kind in f.passes:
                reads.append((key, attr, None))
                v = raw
            else:
                reads.append((key, attr, f.checked if kind in f.passes_checked else read))
                v = read(cmd, key, name)
            if v is not None:
                values[attr] = v
        for f in self._required:
            if f.name not in cmd:
                raise P.missing_field(name, f.name)
        args = self._target(cmd, name, args)
        prepared = self._prepared
        if len(prepared) >= _PREPARED_LAYOUTS:
            prepared.clear()
        args.layout = prepared[layout] = Layout(tuple(reads), layout[1])
        return args

    def _target(self, cmd: Mapping, name: str, args: Args) -> Args:
        first = cmd[name]
        args.value = first
        if self.target is Target.COLLECTION:
            args.coll = P.collection(cmd, args.db)
        elif self.target is Target.COLLECTION_OR_ONE:
            if isinstance(first, str):
                args.coll = P.collection(cmd, args.db)
            elif not (P.is_number(first) and first == 1):
                raise CommandError(ErrorCode.FailedToParse,
                                   f"Invalid command format: the '{name}' field must specify a collection "
                                   "name or 1")
        return args

    def runs_inline(self, cmd: Mapping, engine: Any) -> bool:
        policy = self.inline
        return policy(cmd, engine) if callable(policy) else bool(policy)

    def in_api_version_1(self, cmd: Mapping) -> bool:
        policy = self.api_version_1
        return policy(cmd) if callable(policy) else bool(policy)

    def explains(self, fn: Callable[[Any, Args, str], dict]) -> Callable[[Any, Args, str], dict]:
        """Decorator: this command's explain, given its own parsed arguments."""
        self.explain = fn
        return fn


#: layouts kept per command before its prepared parses start afresh
_PREPARED_LAYOUTS = 64


@functools.cache
def _generic_fields() -> Any:
    """generic.py's table (it declares its fields with this module: imported on first use)."""
    from .generic import GENERIC
    return GENERIC


COMMANDS: dict[str, CommandSpec] = {}


def command(name: str, *aliases: str, help: str, fields: tuple[Field, ...] = (),
            target: Target = Target.VALUE, admin_only: bool = False, write: bool = False,
            open_fields: str = "", inline: InlinePolicy = False,
            privileges: tuple[Privilege, ...] = (), requires_auth: bool = True,
            api_version_1: ApiPolicy = False, write_concern: bool = False,
            test_only: bool = False) -> Callable[[Handler], CommandSpec]:
    """Register a handler `(ctx, args) -> reply` under `name` and its exact-case aliases."""
    def register(fn: Handler) -> CommandSpec:
        spec = CommandSpec(name, fn, help, {f.name: f for f in fields}, target, aliases, admin_only, write,
                           open_fields, inline, privileges, requires_auth, api_version_1, write_concern,
                           test_only=test_only)
        for key in (name, *aliases):
            assert key not in COMMANDS, f"command {key} registered twice"
            COMMANDS[key] = spec
        return spec
    return register


def lookup(name: str) -> Optional[CommandSpec]:
    return COMMANDS.get(name)


def runs_inline(cmd: Mapping, engine: Any) -> bool:
    """May the server answer `cmd` on its event loop? (the declaration decides, unless a fail
    point names the command: it may block, so it runs in a worker)"""
    name = next(iter(cmd), None)
    spec = COMMANDS.get(name) if name is not None else None
    return spec is not None and spec.runs_inline(cmd, engine) and name not in FAIL_POINTS.targets


def writes_data(cmd: Mapping) -> bool:
    """Whether `cmd` may change documents or the catalog: a declared write command, or an
    aggregation ending in $out/$merge (what an fsync lock holds back)."""
    name = next(iter(cmd), None)
    spec = COMMANDS.get(name) if name is not None else None
    if spec is None:
        return False
    if spec.write:
        return True
    if name != "aggregate":
        return False
    pipeline = cmd.get("pipeline")
    last = pipeline[-1] if isinstance(pipeline, list) and pipeline else None
    return isinstance(last, Mapping) and next(iter(last), None) in ("$out", "$merge")


__all__ = ["ANY_USER", "Args", "COMMANDS", "CommandSpec", "Field", "OF_INNER_COMMAND", "Privilege", "Target",
           "Use", "array", "boolean", "command", "doc", "ignored", "integer", "let", "lookup", "on_cluster",
           "on_collection", "on_database", "runs_inline", "string", "unimplemented", "value", "writes_data"]
