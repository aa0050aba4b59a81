"""Authentication over the wire with pymongo as the client: SCRAM-SHA-256 and SCRAM-SHA-1
(explicit, negotiated, speculative), the localhost exception, user management, restarts."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pymongo
import pytest
from pymongo.errors import OperationFailure

from ginkgodb.server.testing import running_server


def _client(address, **kw) -> pymongo.MongoClient:
    return pymongo.MongoClient(*address, serverSelectionTimeoutMS=5000, **kw)


@contextlib.contextmanager
def _auth_server(path=None) -> Iterator[tuple[tuple[str, int], pymongo.MongoClient]]:
    """A --auth server with a root user created through the localhost exception."""
    with running_server(path, auth=True, quiet=True) as address:
        first = _client(address)
        first.admin.command("createUser", "root", pwd="rootpw", roles=["root"])
        root = _client(address, username="root", password="rootpw")
        try:
            yield address, root
        finally:
            root.close()
            first.close()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-1", None])
def test_scram_mechanisms_authenticate(mechanism):
    with _auth_server() as (address, root):
        kw = {"authMechanism": mechanism} if mechanism else {}
        client = _client(address, username="root", password="rootpw", **kw)
        client.t.c.insert_one({"_id": 1})
        assert client.t.c.find_one() == {"_id": 1}
        info = client.admin.command("connectionStatus")["authInfo"]
        assert info["authenticatedUsers"] == [{"user": "root", "db": "admin"}]
        assert info["authenticatedUserRoles"] == [{"role": "root", "db": "admin"}]


def test_speculative_authentication_in_hello():
    with _auth_server() as (address, root):
        c = _client(address)
        hello = c.admin.command("hello", saslSupportedMechs="admin.root")
        assert hello["saslSupportedMechs"] == ["SCRAM-SHA-1", "SCRAM-SHA-256"]
        assert "saslSupportedMechs" not in c.admin.command("hello", saslSupportedMechs="admin.nobody")
        first = b"n,,n=root,r=" + b"x" * 24
        spec = {"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": first, "db": "admin"}
        reply = c.admin.command("hello", speculativeAuthenticate=spec)["speculativeAuthenticate"]
        assert reply["done"] is False and bytes(reply["payload"]).startswith(b"r=" + b"x" * 24)
        spec["payload"] = b"n,,n=nobody,r=" + b"x" * 24
        assert "speculativeAuthenticate" not in c.admin.command("hello", speculativeAuthenticate=spec)


def test_wrong_password_and_unknown_user_fail_alike():
    with _auth_server() as (address, root):
        for user, pwd in (("root", "wrong"), ("nobody", "rootpw")):
            for mech in ("SCRAM-SHA-256", "SCRAM-SHA-1"):
                bad = _client(address, username=user, password=pwd, authMechanism=mech)
                with pytest.raises(OperationFailure) as err:
                    bad.t.c.find_one()
                assert err.value.code == 18 and "Authentication failed." in str(err.value)


def test_sasl_errors():
    with _auth_server() as (address, root):
        c = _client(address)
        with pytest.raises(OperationFailure) as err:
            c.admin.command("saslStart", mechanism="PLAIN", payload=b"x")
        assert err.value.code == 334
        with pytest.raises(OperationFailure) as err:
            c.admin.command("saslContinue", conversationId=12345, payload=b"x")
        assert err.value.code == 17 and "No SASL session state found" in str(err.value)


def test_unauthenticated_commands_need_authentication():
    with _auth_server() as (address, root):
        anon = _client(address)
        assert anon.admin.command("ping")["ok"] == 1
        assert anon.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == []
        with pytest.raises(OperationFailure) as err:
            anon.t.c.find_one()
        assert err.value.code == 13 and err.value.details["errmsg"] == "Command find requires authentication"
        # the localhost exception closed with the first user
        with pytest.raises(OperationFailure) as err:
            anon.admin.command("createUser", "x", pwd="y", roles=[])
        assert err.value.code == 13


def test_localhost_exception_allows_only_creating_a_user():
    with running_server(auth=True, quiet=True) as address:
        anon = _client(address)
        with pytest.raises(OperationFailure) as err:
            anon.t.c.find_one()
        assert err.value.code == 13
        with pytest.raises(OperationFailure) as err:  # only on admin
            anon.t.command("createUser", "x", pwd="y", roles=[])
        assert err.value.code == 13
        with pytest.raises(OperationFailure) as err:  # granting only roles of admin
            anon.admin.command("createUser", "x", pwd="y", roles=[{"role": "read", "db": "t"}])
        assert err.value.code == 13
        anon.admin.command("createUser", "admin", pwd="pw", roles=["userAdminAnyDatabase"])
        with pytest.raises(OperationFailure):
            anon.admin.command("createUser", "other", pwd="pw", roles=[])


def test_users_hold_salted_keys_only():
    with _auth_server() as (address, root):
        root.app.command("createUser", "ann", pwd="s3cret-pw", roles=["readWrite"], customData={"team": 1})
        stored = root.admin["system.users"].find_one({"_id": "app.ann"})
        assert stored["user"] == "ann" and stored["db"] == "app"
        assert stored["roles"] == [{"role": "readWrite", "db": "app"}]
        assert set(stored["credentials"]) == {"SCRAM-SHA-1", "SCRAM-SHA-256"}
        for creds in stored["credentials"].values():
            assert set(creds) == {"iterationCount", "salt", "storedKey", "serverKey"}
        assert stored["credentials"]["SCRAM-SHA-256"]["iterationCount"] == 15000
        assert "s3cret-pw" not in repr(stored)
        info = root.app.command("usersInfo", "ann")["users"][0]
        assert info["mechanisms"] == ["SCRAM-SHA-1", "SCRAM-SHA-256"] and info["customData"] == {"team": 1}
        assert "credentials" not in info
        assert "credentials" in root.app.command("usersInfo", "ann", showCredentials=True)["users"][0]


def test_user_management_commands():
    with _auth_server() as (address, root):
        db = root.app
        db.command("createUser", "bob", pwd="one", roles=["read"])
        with pytest.raises(OperationFailure) as err:
            db.command("createUser", "bob", pwd="one", roles=["read"])
        assert err.value.code == 51003 and 'User "bob@app" already exists' in str(err.value)
        with pytest.raises(OperationFailure) as err:
            db.command("createUser", "eve", pwd="x", roles=["noSuchRole"])
        assert err.value.code == 31 and "Could not find role: noSuchRole@app" in str(err.value)
        with pytest.raises(OperationFailure) as err:
            db.command("createUser", "eve", pwd="x", roles=[{"role": "readAnyDatabase", "db": "app"}])
        assert err.value.code == 31
        with pytest.raises(OperationFailure) as err:
            db.command("createUser", "eve", pwd="x", roles=[], mechanisms=["MONGODB-CR"])
        assert err.value.code == 2

        db.command("updateUser", "bob", pwd="two")
        with pytest.raises(OperationFailure):
            _client(address, username="bob", password="one", authSource="app").app.c.find_one()
        assert _client(address, username="bob", password="two", authSource="app").app.c.find_one() is None

        db.command("grantRolesToUser", "bob", roles=["readWrite", {"role": "read", "db": "other"}])
        roles = db.command("usersInfo", "bob")["users"][0]["roles"]
        assert {"role": "readWrite", "db": "app"} in roles and {"role": "read", "db": "other"} in roles
        db.command("revokeRolesFromUser", "bob", roles=["readWrite"])
        assert {"role": "readWrite", "db": "app"} not in db.command("usersInfo", "bob")["users"][0]["roles"]

        db.command("createUser", "carl", pwd="c", roles=[])
        assert [u["user"] for u in db.command("usersInfo", 1)["users"]] == ["bob", "carl"]
        assert {u["user"] for u in root.admin.command("usersInfo", {"forAllDBs": True})["users"]} == \
            {"bob", "carl", "root"}
        db.command("dropUser", "carl")
        with pytest.raises(OperationFailure) as err:
            db.command("dropUser", "carl")
        assert err.value.code == 11
        assert db.command("dropAllUsersFromDatabase")["n"] == 1
        assert db.command("usersInfo", 1)["users"] == []


def test_dropped_user_loses_access_and_logout():
    with _auth_server() as (address, root):
        root.app.command("createUser", "tmp", pwd="pw", roles=["readWrite"])
        tmp = _client(address, username="tmp", password="pw", authSource="app", maxPoolSize=1)
        tmp.app.c.insert_one({"_id": 1})
        root.app.command("dropUser", "tmp")
        with pytest.raises(OperationFailure) as err:
            tmp.app.c.find_one()
        assert err.value.code == 13
        one = _client(address, username="root", password="rootpw", maxPoolSize=1)
        assert one.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"]
        one.app.command("logout")  # another database's user: nothing happens
        assert one.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"]
        one.admin.command("logout")
        assert one.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == []
        with pytest.raises(OperationFailure) as err:
            one.app.c.find_one()
        assert err.value.code == 13


def test_saslprep_applies_to_scram_sha_256_passwords():
    with _auth_server() as (address, root):
        # RFC 4013: U+00AD (soft hyphen) maps to nothing, U+00A0 (no-break space) to a space
        root.admin.command("createUser", "prep", pwd="I\u00adX a", roles=[], mechanisms=["SCRAM-SHA-256"])
        for pwd in ("IX a", "I\u00adX\u00a0a"):
            c = _client(address, username="prep", password=pwd, authMechanism="SCRAM-SHA-256")
            assert c.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == \
                [{"user": "prep", "db": "admin"}]
        with pytest.raises(OperationFailure):
            _client(address, username="prep", password="IX a", authMechanism="SCRAM-SHA-1").admin.command(
                "connectionStatus")


def test_users_survive_a_restart(tmp_path):
    path = str(tmp_path / "data")
    with _auth_server(path) as (address, root):
        root.app.command("createUser", "keep", pwd="pw", roles=["readWrite"])
        _client(address, username="keep", password="pw", authSource="app").app.c.insert_one({"_id": 1})
    with running_server(path, auth=True, quiet=True) as address:
        anon = _client(address)
        with pytest.raises(OperationFailure):  # users exist: no localhost exception
            anon.admin.command("createUser", "x", pwd="y", roles=[])
        keep = _client(address, username="keep", password="pw", authSource="app")
        assert keep.app.c.find_one() == {"_id": 1}


def test_one_user_per_connection():
    with _auth_server() as (address, root):
        root.admin.command("createUser", "other", pwd="pw", roles=[])
        root.app.command("createUser", "elsewhere", pwd="pw", roles=[])
        conn = _client(address, maxPoolSize=1)
        conn.admin.command("ping")

        from scramp import ScramClient
        for user, db in (("root", "admin"), ("root", "admin"), ("other", "admin"), ("elsewhere", "app")):
            password = {"root": "rootpw"}.get(user, "pw")
            client = ScramClient(["SCRAM-SHA-256"], user, password)
            start = conn[db].command("saslStart", mechanism="SCRAM-SHA-256",
                                     payload=client.get_client_first().encode(), options={"skipEmptyExchange": True})
            client.set_server_first(bytes(start["payload"]).decode())
            final = {"saslContinue": 1, "conversationId": start["conversationId"],
                     "payload": client.get_client_final().encode()}
            if user == "root":
                assert conn[db].command(final)["done"] is True
                continue
            with pytest.raises(OperationFailure) as err:
                conn[db].command(final)
            expected = 5626701 if db == "admin" else 5626702
            assert err.value.code == expected and "root@admin" in str(err.value)
        assert conn.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == \
            [{"user": "root", "db": "admin"}]


def test_without_auth_users_may_still_authenticate():
    with running_server(quiet=True) as address:
        c = _client(address)
        c.admin.command("createUser", "u", pwd="p", roles=["read"])
        assert c.t.c.insert_one({"_id": 1})  # no --auth: nothing is checked
        u = _client(address, username="u", password="p")
        assert u.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == [{"user": "u", "db": "admin"}]
        assert u.t.c.insert_one({"_id": 2})


def test_scram_iteration_counts_follow_their_parameters():
    with _auth_server() as (address, root):
        try:
            root.admin.command("setParameter", 1, scramIterationCount=12000, scramSHA256IterationCount=20000)
            assert root.admin.command("getParameter", 1, scramSHA256IterationCount=1)["scramSHA256IterationCount"] == 20000
            root.app.command("createUser", "bo", pwd="pw-of-bo", roles=["read"])
            creds = root.admin["system.users"].find_one({"_id": "app.bo"})["credentials"]
            assert creds["SCRAM-SHA-1"]["iterationCount"] == 12000
            assert creds["SCRAM-SHA-256"]["iterationCount"] == 20000
            for mechanism in ("SCRAM-SHA-1", "SCRAM-SHA-256"):   # the stored count is the one used
                c = _client(address, username="bo", password="pw-of-bo", authSource="app", authMechanism=mechanism)
                assert c.app.command("connectionStatus")["authInfo"]["authenticatedUsers"] == [{"user": "bo", "db": "app"}]
                c.close()
            with pytest.raises(OperationFailure) as err:
                root.admin.command("setParameter", 1, scramIterationCount=4999)
            assert err.value.code == 2
        finally:
            root.admin.command("setParameter", 1, scramIterationCount=10000, scramSHA256IterationCount=15000)
