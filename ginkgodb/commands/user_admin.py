"""User management: createUser, updateUser, dropUser, dropAllUsersFromDatabase, usersInfo,
grantRolesToUser, revokeRolesFromUser; and user-defined roles: createRole, updateRole, dropRole,
rolesInfo, grantPrivilegesToRole, revokePrivilegesFromRole, grantRolesToRole.

Users and roles are documents of admin.system.users / admin.system.roles (auth_users.py);
each change bumps the server's generation so that every connection resolves its roles again.
Granting a role needs grantRole on the role's database, as on mongod (checked here: which
databases depends on the arguments).
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from bson.binary import Binary

from ..errors import CommandError, ErrorCode
from . import auth_users as U
from .auth_roles import is_builtin
from .auth_scram import MECHANISMS, SHA256, make_credentials
from .auth_state import CLUSTER, AuthSession, namespace, resolve
from .authorization import allows, require, unauthorized
from .context import CommandContext
from .declare import ANY_USER, Args, array, boolean, command, doc, on_database, string, unimplemented, value

_RESTRICTIONS = "authentication restrictions (clientSource, serverAddress) are not supported"


def _changed(ctx: CommandContext) -> None:
    session = getattr(ctx, "auth", None)
    if isinstance(session, AuthSession):
        session.security.changed()


def _name(args: Args, what: str = "user") -> str:
    name = args.value
    if not isinstance(name, str) or not name:
        raise CommandError(ErrorCode.BadValue, f"{what.capitalize()} name must be a non-empty string")
    return name


EXTERNAL = "$external"


def _check_roles(ctx: CommandContext, roles: list[dict], args: Args, action: str = "grantRole") -> None:
    for ref in roles:
        if not is_builtin(ref["role"], ref["db"]) and U.find_role(ctx.engine, ref["db"], ref["role"]) is None:
            raise CommandError(ErrorCode.RoleNotFound, f"Could not find role: {ref['role']}@{ref['db']}")
        require(ctx, action, namespace(ref["db"]), args.cmd, args.db)


def _mechanisms(value: Any, command: str) -> tuple[str, ...]:
    if value is None:
        return MECHANISMS
    if not isinstance(value, list) or not value:
        raise CommandError(ErrorCode.BadValue, "mechanisms field must not be empty")
    for m in value:
        if m not in MECHANISMS:
            raise CommandError(ErrorCode.BadValue, f"Unknown auth mechanism '{m}'")
    return tuple(m for m in MECHANISMS if m in value)


def _credentials(user: str, args: Args, mechanisms: tuple[str, ...]) -> dict:
    pwd = args.pwd
    if not isinstance(pwd, str):
        raise CommandError(ErrorCode.BadValue, "Must provide a 'pwd' field for all user documents, except those "
                                               "with '$external' as the user's source db")
    if not pwd:
        raise CommandError(ErrorCode.BadValue, "User passwords must not be empty")
    digest = args.digest_password
    if not digest and SHA256 in mechanisms:
        raise CommandError(ErrorCode.BadValue, "Use of SCRAM-SHA-256 requires undigested passwords")
    return make_credentials(user, pwd, mechanisms, digest=digest)


def _not_found(user: str, db: str) -> CommandError:
    return CommandError(ErrorCode.UserNotFound, f"Could not find user \"{user}\" for db \"{db}\"")


def _existing(ctx: CommandContext, user: str, db: str) -> dict:
    found = U.find_user(ctx.engine, db, user)
    if found is None:
        raise _not_found(user, db)
    return found


_USER_FIELDS = (string("pwd"), doc("customData"), boolean("digestPassword", True), value("mechanisms"),
                unimplemented("authenticationRestrictions", _RESTRICTIONS))


@command("createUser", help="Adds a user to the system", write=True, write_concern=True,
         fields=(*_USER_FIELDS, array("roles", required=True)), privileges=(on_database("createUser"),))
def create_user(ctx: CommandContext, args: Args) -> dict:
    user, db = _name(args), args.db
    roles = U.role_names(args.roles, db, "createUser")
    _check_roles(ctx, roles, args)
    if db == EXTERNAL:  # authenticated by what the connection proves (an X.509 certificate)
        if args.pwd is not None:
            raise CommandError(ErrorCode.BadValue, "Cannot set the password for users defined on the '$external' "
                                                   "database")
        if args.mechanisms is not None:
            raise CommandError(ErrorCode.BadValue, "mechanisms field must not be set for $external users")
        credentials: dict = {"external": True}
    else:
        credentials = _credentials(user, args, _mechanisms(args.mechanisms, "createUser"))
    entry: dict[str, Any] = {"_id": U.user_id(db, user), "userId": Binary.from_uuid(uuid.uuid4()),
                             "user": user, "db": db, "credentials": credentials, "roles": roles}
    if args.custom_data is not None:
        entry["customData"] = args.custom_data
    U.insert(ctx.engine, U.USERS, entry,
             CommandError(ErrorCode.UserAlreadyExists, f"User \"{user}@{db}\" already exists"))
    _changed(ctx)
    return {}


@command("updateUser", help="Used to update a user, for example to change its password", write=True,
         write_concern=True, fields=(*_USER_FIELDS, value("roles")), privileges=(ANY_USER,))
def update_user(ctx: CommandContext, args: Args) -> dict:
    user, db = _name(args), args.db
    cmd = args.cmd
    if not any(f in cmd for f in ("pwd", "customData", "roles", "mechanisms")):
        raise CommandError(ErrorCode.BadValue, "Must specify at least one field to update in updateUser")
    entry = _existing(ctx, user, db)
    if db == EXTERNAL and ("pwd" in cmd or args.mechanisms is not None):
        raise CommandError(ErrorCode.BadValue, "Cannot set the password for users defined on the '$external' database")
    if "pwd" in cmd:
        if not _self(ctx, user, db) or not allows(ctx, "changeOwnPassword", namespace(db)):
            require(ctx, "changePassword", namespace(db), cmd, db)
        have = tuple(entry.get("credentials", {})) or MECHANISMS
        mechanisms = _mechanisms(args.mechanisms, "updateUser") if args.mechanisms is not None else have
        entry["credentials"] = _credentials(user, args, mechanisms)
    elif args.mechanisms is not None:
        wanted = _mechanisms(args.mechanisms, "updateUser")
        creds = entry.get("credentials", {})
        if any(m not in creds for m in wanted):
            raise CommandError(ErrorCode.BadValue, "mechanisms field must be a subset of previously set mechanisms")
        require(ctx, "changePassword", namespace(db), cmd, db)
        entry["credentials"] = {m: v for m, v in creds.items() if m in wanted}
    if "customData" in cmd:
        if not _self(ctx, user, db) or not allows(ctx, "changeOwnCustomData", namespace(db)):
            require(ctx, "changeCustomData", namespace(db), cmd, db)
        entry["customData"] = args.custom_data
    if "roles" in cmd:
        roles = U.role_names(args.roles, db, "updateUser")
        dropped = [r for r in entry.get("roles", ()) if r not in roles]
        _check_roles(ctx, [r for r in roles if r not in entry.get("roles", ())], args)
        for ref in dropped:
            require(ctx, "revokeRole", namespace(ref["db"]), cmd, db)
        entry["roles"] = roles
    U.replace(ctx.engine, U.USERS, entry)
    _changed(ctx)
    return {}


def _self(ctx: CommandContext, user: str, db: str) -> bool:
    session = getattr(ctx, "auth", None)
    return isinstance(session, AuthSession) and session.user == (user, db)


@command("dropUser", help="Drops a single user.", write=True, write_concern=True,
         privileges=(on_database("dropUser"),))
def drop_user(ctx: CommandContext, args: Args) -> dict:
    user, db = _name(args), args.db
    if not U.delete(ctx.engine, U.USERS, {"_id": U.user_id(db, user)}):
        raise _not_found(user, db)
    _changed(ctx)
    return {}


@command("dropAllUsersFromDatabase", help="Drops all users for a single database.", write=True,
         write_concern=True, privileges=(on_database("dropUser"),))
def drop_all_users(ctx: CommandContext, args: Args) -> dict:
    n = U.delete(ctx.engine, U.USERS, {"db": args.db})
    _changed(ctx)
    return {"n": n}


def _grant_change(ctx: CommandContext, args: Args, command_name: str, grant: bool) -> dict:
    user, db = _name(args), args.db
    roles = U.role_names(args.roles, db, command_name)
    entry = _existing(ctx, user, db)
    if grant:
        _check_roles(ctx, roles, args)
        entry["roles"] = entry.get("roles", []) + [r for r in roles if r not in entry.get("roles", [])]
    else:
        for ref in roles:
            require(ctx, "revokeRole", namespace(ref["db"]), args.cmd, db)
        entry["roles"] = [r for r in entry.get("roles", []) if r not in roles]
    U.replace(ctx.engine, U.USERS, entry)
    _changed(ctx)
    return {}


@command("grantRolesToUser", help="Grants roles to a user.", write=True, write_concern=True,
         fields=(array("roles", required=True),), privileges=(ANY_USER,))
def grant_roles_to_user(ctx: CommandContext, args: Args) -> dict:
    return _grant_change(ctx, args, "grantRolesToUser", True)


@command("revokeRolesFromUser", help="Revokes roles from a user.", write=True, write_concern=True,
         fields=(array("roles", required=True),), privileges=(ANY_USER,))
def revoke_roles_from_user(ctx: CommandContext, args: Args) -> dict:
    return _grant_change(ctx, args, "revokeRolesFromUser", False)


# -- usersInfo ----------------------------------------------------------------------------------
def _user_selection(ctx: CommandContext, args: Args) -> dict:
    """The system.users filter usersInfo's value names, after checking the caller may view it."""
    spec, db, cmd = args.value, args.db, args.cmd
    if isinstance(spec, Mapping) and spec.get("forAllDBs") is True:
        if not allows(ctx, "viewUser", CLUSTER):
            raise unauthorized(db, cmd)
        return {}
    if isinstance(spec, (int, float)) and not isinstance(spec, bool) and spec == 1:
        require(ctx, "viewUser", namespace(db), cmd, db)
        return {"db": db}
    names = spec if isinstance(spec, list) else [spec]
    ids = []
    for item in names:
        if isinstance(item, str):
            user, udb = item, db
        elif isinstance(item, Mapping) and isinstance(item.get("user"), str) and isinstance(item.get("db"), str):
            user, udb = item["user"], item["db"]
        else:
            raise CommandError(ErrorCode.BadValue,
                               "User name must be either a string or an object with \"user\" and \"db\" fields")
        if not _self(ctx, user, udb):
            require(ctx, "viewUser", namespace(udb), cmd, db)
        ids.append(U.user_id(udb, user))
    return {"_id": {"$in": ids}}


@command("usersInfo", help="Returns information about users.",
         fields=(boolean("showCredentials"), boolean("showPrivileges"), boolean("showCustomData", True),
                 boolean("showAuthenticationRestrictions"), doc("filter")), privileges=(ANY_USER,))
def users_info(ctx: CommandContext, args: Args) -> dict:
    selection = _user_selection(ctx, args)
    if args.filter:
        selection = {"$and": [selection, args.filter]}
    users = []
    for entry in U.find_docs(ctx.engine, U.USERS, selection):
        shown: dict[str, Any] = {"_id": entry["_id"], "userId": entry.get("userId"), "user": entry["user"],
                                 "db": entry["db"]}
        if args.show_credentials:
            shown["credentials"] = entry.get("credentials", {})
        if "customData" in entry and args.show_custom_data:
            shown["customData"] = entry["customData"]
        shown["roles"] = entry.get("roles", [])
        if args.show_privileges:
            reached, grants = resolve(ctx.engine, entry.get("roles", []))
            shown["inheritedRoles"] = reached
            shown["inheritedPrivileges"] = [g.as_document() for g in grants]
        if args.show_authentication_restrictions:
            shown["authenticationRestrictions"] = []
        creds = entry.get("credentials", {})
        shown["mechanisms"] = ["external"] if creds.get("external") else [m for m in MECHANISMS if m in creds]
        users.append(shown)
    users.sort(key=lambda u: (u["db"], u["user"]))
    return {"users": users}


# -- user-defined roles -------------------------------------------------------------------------
def _privileges(value: Any, command_name: str) -> list[dict]:
    if not isinstance(value, list):
        raise CommandError(ErrorCode.TypeMismatch, f"BSON field '{command_name}.privileges' is the wrong type, "
                                                   "expected type 'array'")
    out = []
    for p in value:
        resource = p.get("resource") if isinstance(p, Mapping) else None
        actions = p.get("actions") if isinstance(p, Mapping) else None
        if not isinstance(resource, Mapping) or not isinstance(actions, list) or \
                not all(isinstance(a, str) for a in actions):
            raise CommandError(ErrorCode.FailedToParse,
                               "Privilege documents need a 'resource' document and an 'actions' array of strings")
        if not (resource.get("cluster") is True or resource.get("anyResource") is True or
                (isinstance(resource.get("db"), str) and isinstance(resource.get("collection"), str))):
            raise CommandError(ErrorCode.FailedToParse,
                               "resource must have 'db' and 'collection' strings, 'cluster: true' or "
                               "'anyResource: true'")
        out.append({"resource": dict(resource), "actions": list(actions)})
    return out


def _role_name(args: Args) -> str:
    name = _name(args, "role")
    if is_builtin(name, args.db) or name in ("__system",):
        raise CommandError(ErrorCode.BadValue, "Cannot create roles with the same name as a built-in role")
    return name


def _existing_role(ctx: CommandContext, role: str, db: str) -> dict:
    found = U.find_role(ctx.engine, db, role)
    if found is None:
        raise CommandError(ErrorCode.RoleNotFound, f"Could not find role: {role}@{db}")
    return found


_ROLE_FIELDS = (unimplemented("authenticationRestrictions", _RESTRICTIONS),)


@command("createRole", help="Adds a role to the system", write=True, write_concern=True,
         fields=(array("privileges", required=True), array("roles", required=True), *_ROLE_FIELDS),
         privileges=(on_database("createRole"),))
def create_role(ctx: CommandContext, args: Args) -> dict:
    role, db = _role_name(args), args.db
    privileges = _privileges(args.privileges, "createRole")
    roles = U.role_names(args.roles, db, "createRole")
    _check_roles(ctx, roles, args)
    U.insert(ctx.engine, U.ROLES, {"_id": U.user_id(db, role), "role": role, "db": db, "privileges": privileges,
                                   "roles": roles},
             CommandError(ErrorCode.RoleAlreadyExists, f"Role \"{role}@{db}\" already exists"))
    _changed(ctx)
    return {}


@command("updateRole", help="Used to update a role", write=True, write_concern=True,
         fields=(value("privileges"), value("roles"), *_ROLE_FIELDS), privileges=(on_database("createRole"),))
def update_role(ctx: CommandContext, args: Args) -> dict:
    role, db = _name(args, "role"), args.db
    entry = _existing_role(ctx, role, db)
    if "privileges" not in args.cmd and "roles" not in args.cmd:
        raise CommandError(ErrorCode.BadValue, "Must specify at least one field to update in updateRole")
    if "privileges" in args.cmd:
        entry["privileges"] = _privileges(args.privileges, "updateRole")
    if "roles" in args.cmd:
        entry["roles"] = U.role_names(args.roles, db, "updateRole")
        _check_roles(ctx, entry["roles"], args)
    U.replace(ctx.engine, U.ROLES, entry)
    _changed(ctx)
    return {}


@command("dropRole", help="Drops a single role.", write=True, write_concern=True,
         privileges=(on_database("dropRole"),))
def drop_role(ctx: CommandContext, args: Args) -> dict:
    role, db = _name(args, "role"), args.db
    if not U.delete(ctx.engine, U.ROLES, {"_id": U.user_id(db, role)}):
        raise CommandError(ErrorCode.RoleNotFound, f"Could not find role: {role}@{db}")
    ref = {"role": role, "db": db}
    for coll in (U.USERS, U.ROLES):  # as mongod: the users and roles that named it lose it
        for entry in U.find_docs(ctx.engine, coll, {"roles": ref}):
            entry["roles"] = [r for r in entry.get("roles", []) if r != ref]
            U.replace(ctx.engine, coll, entry)
    _changed(ctx)
    return {}


def _role_change(ctx: CommandContext, args: Args, field: str, grant: bool) -> dict:
    role, db = _name(args, "role"), args.db
    entry = _existing_role(ctx, role, db)
    if field == "privileges":
        changes = _privileges(args.privileges, args.name)
        have = entry.get("privileges", [])
        entry["privileges"] = have + [p for p in changes if p not in have] if grant else \
            [p for p in have if p not in changes]
    else:
        refs = U.role_names(args.roles, db, args.name)
        if grant:
            _check_roles(ctx, refs, args)
        have = entry.get("roles", [])
        entry["roles"] = have + [r for r in refs if r not in have] if grant else [r for r in have if r not in refs]
    U.replace(ctx.engine, U.ROLES, entry)
    _changed(ctx)
    return {}


@command("grantPrivilegesToRole", help="Grants privileges to a role", write=True, write_concern=True,
         fields=(array("privileges", required=True),), privileges=(on_database("grantRole"),))
def grant_privileges_to_role(ctx: CommandContext, args: Args) -> dict:
    return _role_change(ctx, args, "privileges", True)


@command("revokePrivilegesFromRole", help="Revokes privileges from a role", write=True, write_concern=True,
         fields=(array("privileges", required=True),), privileges=(on_database("revokeRole"),))
def revoke_privileges_from_role(ctx: CommandContext, args: Args) -> dict:
    return _role_change(ctx, args, "privileges", False)


@command("grantRolesToRole", help="Grants roles to another role.", write=True, write_concern=True,
         fields=(array("roles", required=True),), privileges=(on_database("grantRole"),))
def grant_roles_to_role(ctx: CommandContext, args: Args) -> dict:
    return _role_change(ctx, args, "roles", True)


@command("revokeRolesFromRole", help="Revokes roles from another role.", write=True, write_concern=True,
         fields=(array("roles", required=True),), privileges=(on_database("revokeRole"),))
def revoke_roles_from_role(ctx: CommandContext, args: Args) -> dict:
    return _role_change(ctx, args, "roles", False)


@command("rolesInfo", help="Returns information about roles.",
         fields=(boolean("showPrivileges"), boolean("showBuiltinRoles"),
                 unimplemented("showAuthenticationRestrictions", _RESTRICTIONS)),
         privileges=(on_database("viewRole"),))
def roles_info(ctx: CommandContext, args: Args) -> dict:
    spec, db = args.value, args.db
    if isinstance(spec, (int, float)) and not isinstance(spec, bool) and spec == 1:
        refs = [{"role": d["role"], "db": d["db"]} for d in U.find_docs(ctx.engine, U.ROLES, {"db": db})]
        if args.show_builtin_roles:
            from .auth_roles import BUILTIN_ROLES
            refs += [{"role": r, "db": db} for r in BUILTIN_ROLES if is_builtin(r, db)]
    else:
        refs = U.role_names(spec if isinstance(spec, list) else [spec], db, "rolesInfo")
    out = []
    for ref in refs:
        builtin = is_builtin(ref["role"], ref["db"])
        entry = None if builtin else U.find_role(ctx.engine, ref["db"], ref["role"])
        if not builtin and entry is None:
            continue
        direct = [] if entry is None else entry.get("roles", [])
        reached, grants = resolve(ctx.engine, [ref])
        shown: dict[str, Any] = {"_id": U.user_id(ref["db"], ref["role"]), "role": ref["role"], "db": ref["db"],
                                 "isBuiltin": builtin, "roles": direct,
                                 "inheritedRoles": [r for r in reached if r != ref]}
        if args.show_privileges:
            shown["privileges"] = [g.as_document() for g in grants] if entry is None else entry.get("privileges", [])
            shown["inheritedPrivileges"] = [g.as_document() for g in grants]
        out.append(shown)
    return {"roles": out}


__all__: list[str] = []
