"""Authorization with --auth: a matrix of representative commands per built-in role (allowed,
or 13 Unauthorized with mongod's message), listDatabases/listCollections filtering, cursor
ownership and user-defined roles."""
from __future__ import annotations

import pymongo
import pytest
from pymongo.errors import OperationFailure

from ginkgodb.server.testing import running_server

DB = "app"
OPS = {
    "find": lambda c: c[DB].c.find_one(),
    "insert": lambda c: c[DB].c.insert_one({}),
    "createIndex": lambda c: c[DB].c.create_index("k"),
    "drop": lambda c: c[DB].command("drop", "scratch"),
    "listCollections": lambda c: c[DB].list_collection_names(),
    "dbStats": lambda c: c[DB].command("dbStats"),
    "createUser": lambda c: c[DB].command("createUser", "made", pwd="pw", roles=[]),
    "profile": lambda c: c[DB].command("profile", -1),
    "serverStatus": lambda c: c.admin.command("serverStatus"),
    "getParameter": lambda c: c.admin.command("getParameter", 1, featureCompatibilityVersion=1),
    "findOtherDb": lambda c: c.other.c.find_one(),
    "findSystemUsers": lambda c: c.admin["system.users"].find_one(),
}
# role -> the operations it may run (all others answer 13)
MATRIX = {
    "read": {"find", "listCollections", "dbStats"},
    "readWrite": {"find", "insert", "createIndex", "drop", "listCollections", "dbStats"},
    "dbAdmin": {"createIndex", "drop", "listCollections", "dbStats", "profile"},
    "userAdmin": {"createUser"},
    "dbOwner": {"find", "insert", "createIndex", "drop", "listCollections", "dbStats", "createUser", "profile"},
    "clusterMonitor": {"dbStats", "serverStatus", "getParameter"},
    "clusterAdmin": {"dbStats", "serverStatus", "getParameter"},
    "readAnyDatabase": {"find", "listCollections", "dbStats", "findOtherDb"},
    "readWriteAnyDatabase": {"find", "insert", "createIndex", "drop", "listCollections", "dbStats", "findOtherDb"},
    "userAdminAnyDatabase": {"createUser", "findSystemUsers"},
    "dbAdminAnyDatabase": {"createIndex", "drop", "listCollections", "dbStats", "profile"},
    "backup": {"find", "listCollections", "dbStats", "serverStatus", "getParameter", "findOtherDb",
               "findSystemUsers"},
    "restore": {"insert", "createIndex", "drop", "createUser", "getParameter", "findSystemUsers"},
    "root": set(OPS),
}
ADMIN_ONLY = {"clusterMonitor", "clusterAdmin", "readAnyDatabase", "readWriteAnyDatabase", "userAdminAnyDatabase",
              "dbAdminAnyDatabase", "backup", "restore", "root"}


def _client(address, **kw) -> pymongo.MongoClient:
    return pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000, **kw)


@pytest.fixture(scope="module")
def server():
    with running_server(auth=True, quiet=True) as address:
        _client(address).admin.command("createUser", "root", pwd="rootpw", roles=["root"])
        root = _client(address, username="root", password="rootpw")
        yield address, root
        root.close()


def _reset(root) -> None:
    root[DB].c.insert_one({"seed": 1})
    root.other.c.insert_one({"seed": 1})
    if "scratch" not in root[DB].list_collection_names():
        root[DB].create_collection("scratch")
    if root[DB].command("usersInfo", "made")["users"]:
        root[DB].command("dropUser", "made")


@pytest.mark.parametrize("role", sorted(MATRIX))
def test_role_matrix(server, role):
    address, root = server
    role_db = "admin" if role in ADMIN_ONLY else DB
    name = f"u_{role}"
    root[role_db].command("createUser", name, pwd="pw", roles=[{"role": role, "db": role_db}])
    try:
        user = _client(address, username=name, password="pw", authSource=role_db)
        for op, run in OPS.items():
            _reset(root)
            if op in MATRIX[role]:
                run(user)
            else:
                with pytest.raises(OperationFailure) as err:
                    run(user)
                assert err.value.code == 13, (role, op, err.value)
                assert err.value.details["codeName"] == "Unauthorized"
                assert err.value.details["errmsg"].startswith("not authorized on "), (role, op)
        user.close()
    finally:
        root[role_db].command("dropUser", name)


def test_unauthorized_message_prints_the_command(server):
    address, root = server
    root[DB].command("createUser", "msg", pwd="pw", roles=["read"])
    try:
        user = _client(address, username="msg", password="pw", authSource=DB)
        with pytest.raises(OperationFailure) as err:
            user[DB].command("drop", "c")
        text = err.value.details["errmsg"]
        assert text.startswith('not authorized on app to execute command { drop: "c", ')
        assert '$db: "app"' in text and "lsid: { id: UUID(\"" in text
        with pytest.raises(OperationFailure) as err:  # secrets never appear
            user[DB].command("createUser", "x", pwd="hunter2", roles=[])
        assert "hunter2" not in err.value.details["errmsg"] and 'pwd: "xxx"' in err.value.details["errmsg"]
    finally:
        root[DB].command("dropUser", "msg")


def test_list_databases_shows_authorized_databases(server):
    address, root = server
    _reset(root)
    root[DB].command("createUser", "lister", pwd="pw", roles=["read"])
    try:
        user = _client(address, username="lister", password="pw", authSource=DB)
        assert user.list_database_names() == [DB]
        with pytest.raises(OperationFailure) as err:
            user.admin.command("listDatabases", authorizedDatabases=False)
        assert err.value.code == 13
        assert {DB, "other", "admin"} <= set(root.list_database_names())
        assert root.admin.command("listDatabases", authorizedDatabases=True)["databases"]
    finally:
        root[DB].command("dropUser", "lister")


def test_cursors_belong_to_their_user(server):
    address, root = server
    root[DB].cursors.delete_many({})
    root[DB].cursors.insert_many([{"_id": i} for i in range(10)])
    root[DB].command("createUser", "owner", pwd="pw", roles=["read"])
    root[DB].command("createUser", "thief", pwd="pw", roles=["read"])
    try:
        owner = _client(address, username="owner", password="pw", authSource=DB)
        thief = _client(address, username="thief", password="pw", authSource=DB)
        first = owner[DB].command("find", "cursors", batchSize=2)
        cid = first["cursor"]["id"]
        assert cid
        for cmd in ({"getMore": cid, "collection": "cursors"}, {"killCursors": "cursors", "cursors": [cid]}):
            with pytest.raises(OperationFailure) as err:
                thief[DB].command(cmd)
            assert err.value.code == 13 and f"cursor id {cid} was not created by the authenticated user" in str(
                err.value)
        more = owner[DB].command("getMore", cid, collection="cursors", batchSize=100)
        assert len(more["cursor"]["nextBatch"]) == 8
    finally:
        root[DB].command("dropUser", "owner")
        root[DB].command("dropUser", "thief")


def test_user_defined_roles(server):
    address, root = server
    root[DB].only.insert_one({"_id": 1})
    root[DB].priv.delete_many({})
    root[DB].priv.insert_one({"_id": "x"})
    root[DB].command("createRole", "onlyReader", roles=[],
                     privileges=[{"resource": {"db": DB, "collection": "only"}, "actions": ["find"]}])
    root[DB].command("createRole", "onlyWriter", roles=["onlyReader"],
                     privileges=[{"resource": {"db": DB, "collection": "only"}, "actions": ["insert"]}])
    with pytest.raises(OperationFailure) as err:
        root[DB].command("createRole", "onlyReader", roles=[], privileges=[])
    assert err.value.code == 51002
    root[DB].command("createUser", "scoped", pwd="pw", roles=["onlyWriter"])
    try:
        user = _client(address, username="scoped", password="pw", authSource=DB)
        assert user[DB].only.find_one({"_id": 1}) == {"_id": 1}
        user[DB].only.insert_one({"_id": 2})
        with pytest.raises(OperationFailure) as err:
            user[DB].priv.find_one()
        assert err.value.code == 13
        with pytest.raises(OperationFailure) as err:
            user[DB].list_collection_names()
        assert err.value.code == 13
        names = user[DB].list_collection_names(authorizedCollections=True)
        assert names == ["only"]
        info = root[DB].command("rolesInfo", "onlyWriter", showPrivileges=True)["roles"][0]
        assert info["inheritedRoles"] == [{"role": "onlyReader", "db": DB}]
        assert {tuple(p["actions"]) for p in info["inheritedPrivileges"]} == {("find",), ("insert",)}
        # changes take effect on open connections
        root[DB].command("grantPrivilegesToRole", "onlyReader",
                         privileges=[{"resource": {"db": DB, "collection": "priv"}, "actions": ["find"]}])
        assert user[DB].priv.find_one() == {"_id": "x"}
        root[DB].command("dropRole", "onlyReader")
        with pytest.raises(OperationFailure):
            user[DB].only.find_one()
        user[DB].only.insert_one({"_id": 3})
        assert root[DB].command("rolesInfo", "onlyWriter")["roles"][0]["roles"] == []
    finally:
        root[DB].command("dropUser", "scoped")
        root[DB].command("dropRole", "onlyWriter")


def test_granting_a_role_needs_grant_role_on_its_database(server):
    address, root = server
    root[DB].command("createUser", "ua", pwd="pw", roles=["userAdmin"])
    try:
        ua = _client(address, username="ua", password="pw", authSource=DB)
        ua[DB].command("createUser", "mine", pwd="pw", roles=["read"])
        with pytest.raises(OperationFailure) as err:
            ua[DB].command("createUser", "theirs", pwd="pw", roles=[{"role": "read", "db": "other"}])
        assert err.value.code == 13
        with pytest.raises(OperationFailure) as err:
            ua[DB].command("grantRolesToUser", "mine", roles=[{"role": "root", "db": "admin"}])
        assert err.value.code == 13
        ua[DB].command("dropUser", "mine")
    finally:
        root[DB].command("dropUser", "ua")


def test_embedded_client_is_trusted():
    from ginkgodb import MongoClient
    client = MongoClient()
    client.admin.command("createUser", "x", pwd="y", roles=[])
    assert client.t.c.insert_one({"_id": 1}).inserted_id == 1
    assert client.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == []


def test_pipelines_and_explain_need_what_they_reach(server):
    address, root = server
    root[DB].c.insert_one({"seed": 1})
    root.other.c.insert_one({"seed": 1})
    root[DB].command("createUser", "piper", pwd="pw", roles=["readWrite"])
    try:
        user = _client(address, username="piper", password="pw", authSource=DB)
        assert list(user[DB].c.aggregate([{"$out": "copy"}])) == []
        for pipeline in ([{"$out": {"db": "other", "coll": "copy"}}],
                         [{"$lookup": {"from": "x", "pipeline": [{"$unionWith": {"coll": "system.profile"}}],
                                       "as": "j"}}],
                         [{"$facet": {"a": [{"$unionWith": "system.users"}]}}]):
            with pytest.raises(OperationFailure) as err:
                list(user[DB].c.aggregate(pipeline))
            assert err.value.code == 13, pipeline
        user[DB].pipes.insert_one({"_id": 1})
        assert list(user[DB].pipes.aggregate([{"$lookup": {"from": "x", "pipeline": [{"$unionWith": "y"}], "as": "j"}},
                                          {"$project": {"_id": 0, "j": 1}}])) == [{"j": []}]
        assert user[DB].command("explain", {"find": "c"})["ok"] == 1
        with pytest.raises(OperationFailure) as err:
            user.other.command("explain", {"find": "c"})
        assert err.value.code == 13
        with pytest.raises(OperationFailure) as err:
            user[DB].command("renameCollection", f"{DB}.c", to="other.c2")
        assert err.value.code == 13
    finally:
        root[DB].command("dropUser", "piper")


def test_own_operations_need_no_cluster_action(server):
    address, root = server
    root[DB].command("createUser", "opsy", pwd="pw", roles=["read"])
    try:
        user = _client(address, username="opsy", password="pw", authSource=DB)
        with pytest.raises(OperationFailure) as err:
            user.admin.command("currentOp")
        assert err.value.code == 13
        mine = user.admin.command("currentOp", **{"$ownOps": True})["inprog"]
        assert [e["command"].get("currentOp") for e in mine] == [1]  # only its own: this very command
        with pytest.raises(OperationFailure) as err:
            user.admin.command("killOp", op=123456)
        assert err.value.code == 13
        assert len(root.admin.command("currentOp")["inprog"]) >= 1
    finally:
        root[DB].command("dropUser", "opsy")


def test_plain_writes_to_system_users_take_effect(server):
    address, root = server
    root[DB].command("createUser", "plain", pwd="pw", roles=["read"])
    try:
        user = _client(address, username="plain", password="pw", authSource=DB)
        with pytest.raises(OperationFailure):
            user[DB].c.insert_one({})
        root.admin["system.users"].update_one({"_id": f"{DB}.plain"},
                                              {"$set": {"roles": [{"role": "readWrite", "db": DB}]}})
        user[DB].c.insert_one({})
    finally:
        root[DB].command("dropUser", "plain")
