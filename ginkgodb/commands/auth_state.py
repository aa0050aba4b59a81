"""Who a connection is and what it may do.

`Security` is the server's (one per server: whether --auth is on, who owns which cursor, where
authentication events are reported); `AuthSession` is one connection's (its authenticated user,
that user's resolved privileges, SASL conversations in progress). The wire server makes one
AuthSession per connection and hands it to every command through `CommandContext.auth`; the
engine knows nothing of either. The embedded client has no AuthSession: it is a trusted local
process, as code linked against the storage would be.
"""
from __future__ import annotations

import ipaddress
import itertools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import CommandError, ErrorCode
from .auth_roles import BUILTIN_ROLES
from .auth_users import ADMIN, find_role, find_user, has_users

#: a resource a command needs: ("cluster", "", "") or ("ns", db, collection; "" for the database)
Resource = tuple[str, str, str]
CLUSTER: Resource = ("cluster", "", "")


def namespace(db: str, coll: Optional[str] = None) -> Resource:
    return ("ns", db, coll or "")


def is_normal(coll: str) -> bool:
    return not coll.startswith("system.")


@dataclass(frozen=True)
class Grant:
    """One resolved privilege: a resource pattern and its actions ("*": every action)."""

    kind: str            # "db" | "ns" | "anyNormal" | "anyDb" | "cluster" | "any"
    db: str
    coll: str
    actions: frozenset[str]

    def covers(self, resource: Resource) -> bool:
        kind = self.kind
        if kind == "any":
            return True
        if resource[0] == "cluster":
            return kind == "cluster"
        _, db, coll = resource
        if kind == "db":
            return db == self.db and (not coll or is_normal(coll))
        if kind == "ns":
            return db == self.db and coll == self.coll
        if kind == "anyNormal":
            return not coll or is_normal(coll)
        if kind == "anyDb":
            return coll == self.coll
        return False

    def allows(self, action: str, resource: Resource) -> bool:
        return ("*" in self.actions or action in self.actions) and self.covers(resource)

    def as_document(self) -> dict:
        """The privilege as usersInfo/connectionStatus show it."""
        if self.kind == "cluster":
            resource: dict = {"cluster": True}
        elif self.kind == "any":
            resource = {"anyResource": True}
        else:
            resource = {"db": "" if self.kind in ("anyNormal", "anyDb") else self.db,
                        "collection": self.coll if self.kind in ("ns", "anyDb") else ""}
        return {"resource": resource, "actions": sorted(self.actions)}


#: what the localhost exception grants (mongod's default privileges with no user): create the
#: first user in admin (granting it roles of admin), and initiate a replica set
_LOCALHOST_GRANTS = (Grant("db", "admin", "", frozenset({"createUser", "grantRole"})),
                     Grant("db", "$external", "", frozenset({"createUser"})),
                     Grant("cluster", "", "", frozenset({"replSetConfigure", "replSetGetStatus"})))


def _builtin_grant(pattern: str, db: str, actions: Iterable[str]) -> Grant:
    acts = frozenset(actions)
    if pattern == "db":
        return Grant("db", db, "", acts)
    if pattern.startswith("db:"):
        return Grant("ns", db, pattern[3:], acts)
    if pattern.startswith("anyDb:"):
        return Grant("anyDb", "", pattern[6:], acts)
    if pattern.startswith("ns:"):
        ns_db, _, coll = pattern[3:].partition(".")
        return Grant("ns", ns_db, coll, acts)
    return Grant(pattern, "", "", acts)   # anyNormal, cluster, any


def _defined_grant(privilege: Any) -> Optional[Grant]:
    """A user-defined role's privilege document {resource: {...}, actions: [...]}."""
    resource = privilege.get("resource") if isinstance(privilege, dict) else None
    actions = frozenset(a for a in privilege.get("actions", ()) if isinstance(a, str)) if resource else None
    if not isinstance(resource, dict) or actions is None:
        return None
    if resource.get("cluster") is True:
        return Grant("cluster", "", "", actions)
    if resource.get("anyResource") is True:
        return Grant("any", "", "", actions)
    db, coll = resource.get("db", ""), resource.get("collection", "")
    if not db:
        return Grant("anyNormal", "", "", actions) if not coll else Grant("anyDb", "", coll, actions)
    return Grant("db", db, "", actions) if not coll else Grant("ns", db, coll, actions)


def resolve(engine: Any, roles: Iterable[dict]) -> tuple[list[dict], list[Grant]]:
    """Every role reached from `roles` (inherited ones included) and their privileges."""
    seen: list[dict] = []
    grants: list[Grant] = []
    stack = [dict(r) for r in roles]
    while stack:
        ref = stack.pop()
        if ref in seen:
            continue
        seen.append(ref)
        name, db = ref.get("role", ""), ref.get("db", "")
        builtin = BUILTIN_ROLES.get(name)
        if builtin is not None and (not builtin[2] or db == ADMIN):
            privileges, inherits, _ = builtin
            grants.extend(_builtin_grant(p, db, acts) for p, acts in privileges)
            stack.extend({"role": r, "db": db} for r in inherits)
            continue
        defined = find_role(engine, db, name)
        if defined is None:
            continue
        grants.extend(g for g in map(_defined_grant, defined.get("privileges", ())) if g is not None)
        stack.extend(dict(r) for r in defined.get("roles", ()) if isinstance(r, dict))
    return seen, grants


#: how an authentication event is reported: (succeeded, attributes)
Reporter = Callable[[bool, dict], None]


class Security:
    """Server-wide: --auth, cursor owners, the generation of the user and role documents."""

    def __init__(self, enabled: bool = False, report: Optional[Reporter] = None) -> None:
        self.enabled = enabled
        self.report = report
        self.generation = 0          # bumped by every user or role change: sessions re-resolve
        self._owners: dict[int, frozenset[tuple[str, str]]] = {}
        self._lock = threading.Lock()

    def changed(self) -> None:
        with self._lock:
            self.generation += 1

    def own_cursor(self, cursor_id: int, users: frozenset[tuple[str, str]]) -> None:
        with self._lock:
            if len(self._owners) > 100_000:   # cursors that timed out leave entries behind
                self._owners.clear()
            self._owners[int(cursor_id)] = users

    def cursor_owner(self, cursor_id: int) -> Optional[frozenset[tuple[str, str]]]:
        with self._lock:
            return self._owners.get(int(cursor_id))

    def event(self, succeeded: bool, **attr: Any) -> None:
        if self.report is not None:
            self.report(succeeded, attr)


def is_loopback(address: Optional[str]) -> bool:
    """Whether a client address ("host:port", "[v6]:port" or a Unix socket path) is local."""
    if not address:
        return False
    host = address.rsplit(":", 1)[0].strip("[]") if ":" in address else address
    if host.startswith("/"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class AuthSession:
    """One connection's authentication state."""

    _conversation_ids = itertools.count(1)

    def __init__(self, security: Security, remote: Optional[str], *,
                 certificate_subject: Optional[str] = None) -> None:
        self.security = security
        self.remote = remote or ""
        #: the subject of the client's validated TLS certificate (MONGODB-X509's user name)
        self.certificate_subject = certificate_subject
        self.loopback = is_loopback(remote)
        self.user: Optional[tuple[str, str]] = None   # (user, db)
        self.roles: list[dict] = []                   # every role reached, inherited ones included
        self.direct_roles: list[dict] = []
        self.grants: list[Grant] = []
        self._generation = -1
        self.conversations: dict[int, Any] = {}
        #: the localhost exception is in force for the command being checked (check_command)
        self.bypass = False

    # -- who ------------------------------------------------------------------------------------
    @property
    def authenticated(self) -> bool:
        return self.user is not None

    @property
    def users(self) -> frozenset[tuple[str, str]]:
        return frozenset([self.user]) if self.user is not None else frozenset()

    def new_conversation(self, conversation: Any) -> int:
        cid = next(self._conversation_ids) & 0x7FFFFFFF
        self.conversations = {cid: conversation}   # one at a time: a new start abandons the last
        return cid

    def log_in(self, engine: Any, user: str, db: str) -> None:
        """mongod 7.0 keeps one user per connection: authenticating again as the same user is
        allowed, as another user is refused."""
        previous = self.user
        if previous is not None and previous != (user, db):
            named = f"{previous[0]}@{previous[1]}"
            if previous[1] == db:
                raise CommandError(ErrorCode.AuthenticatedAsAnotherUser,
                                   f"Each client connection may only be authenticated once. Previously "
                                   f"authenticated as: {named}")
            raise CommandError(ErrorCode.AuthenticatedOnAnotherDatabase,
                               f"Client has attempted to authenticate on multiple databases.Already "
                               f"authenticated as: {named}")
        self.user = (user, db)
        self._generation = -1
        self.refresh(engine)

    def log_out(self) -> None:
        self.user = None
        self.roles, self.direct_roles, self.grants = [], [], []
        self.conversations = {}

    def refresh(self, engine: Any) -> None:
        """Resolve the user's roles again when users or roles changed since the last time (a
        dropped user is logged out)."""
        if self.user is None or self._generation == self.security.generation:
            return
        generation = self.security.generation
        doc = find_user(engine, self.user[1], self.user[0])
        if doc is None:
            self.log_out()
            return
        self.direct_roles = [dict(r) for r in doc.get("roles", ())]
        self.roles, self.grants = resolve(engine, self.direct_roles)
        self._generation = generation

    # -- what -----------------------------------------------------------------------------------
    def localhost_bypass(self, engine: Any) -> bool:
        """mongod's localhost exception: with --auth and no user at all, a loopback client may
        create the first user in the admin database (and initiate a replica set)."""
        return self.security.enabled and self.loopback and not self.authenticated and not has_users(engine)

    def allows(self, action: str, resource: Resource) -> bool:
        grants = _LOCALHOST_GRANTS if self.bypass else self.grants
        return any(g.allows(action, resource) for g in grants)

    def has_any_on_db(self, db: str) -> bool:
        """Some privilege on the database or one of its collections (listDatabases' filter)."""
        for g in self.grants:
            if g.kind in ("any", "anyNormal", "anyDb") or (g.kind in ("db", "ns") and g.db == db):
                return True
        return False

    def has_any_on_collection(self, db: str, coll: str) -> bool:
        return any(g.covers(namespace(db, coll)) and g.kind != "cluster" for g in self.grants)


__all__ = ["AuthSession", "CLUSTER", "Grant", "Resource", "Security", "is_loopback", "is_normal", "namespace",
           "resolve"]
