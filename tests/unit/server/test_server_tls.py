"""TLS with pymongo as the client; the certificates are made here with `cryptography`."""
from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import ConnectionFailure, OperationFailure

from ginkgodb.server.testing import running_server
from ginkgodb.server.tls import TLSSetupError, server_context

pytest.importorskip("cryptography", reason="the TLS tests make their certificates with cryptography")
from unit.server.certs import make_pki  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, str]:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _ping(address, **kw) -> bool:
    client = pymongo.MongoClient(*address, serverSelectionTimeoutMS=1500, connectTimeoutMS=1500, **kw)
    try:
        return client.admin.command("ping")["ok"] == 1
    except ConnectionFailure:
        return False
    finally:
        client.close()


def test_require_tls(pki):
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], quiet=True) as address:
        assert _ping(address, tls=True, tlsCAFile=pki["ca"])
        assert not _ping(address)  # plain: closed
        assert not _ping(address, tls=True)  # the server's CA is unknown to the client
        client = pymongo.MongoClient(*address, tls=True, tlsCAFile=pki["ca"])
        client.t.c.insert_many([{"_id": i, "pad": "x" * 1000} for i in range(2000)])
        assert len(list(client.t.c.find())) == 2000  # many records, many TLS frames
        assert client.admin.command("getCmdLineOpts")["parsed"]["net"]["tls"]["mode"] == "requireTLS"


@pytest.mark.parametrize("mode", ["allowTLS", "preferTLS"])
def test_allow_and_prefer_tls_take_both(pki, mode):
    with running_server(tls_mode=mode, tls_certificate_key_file=pki["server"], quiet=True) as address:
        assert _ping(address, tls=True, tlsCAFile=pki["ca"])
        assert _ping(address)


def test_client_certificates_are_validated(pki):
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], tls_ca_file=pki["ca"],
                        quiet=True) as address:
        assert not _ping(address, tls=True, tlsCAFile=pki["ca"])   # no certificate
        assert _ping(address, tls=True, tlsCAFile=pki["ca"], tlsCertificateKeyFile=pki["client"])
        assert not _ping(address, tls=True, tlsCAFile=pki["ca"], tlsCertificateKeyFile=pki["stranger"])


def test_connections_without_certificates_may_be_allowed(pki):
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], tls_ca_file=pki["ca"],
                        tls_allow_connections_without_certificates=True, quiet=True) as address:
        assert _ping(address, tls=True, tlsCAFile=pki["ca"])
        assert _ping(address, tls=True, tlsCAFile=pki["ca"], tlsCertificateKeyFile=pki["client"])
        assert not _ping(address, tls=True, tlsCAFile=pki["ca"], tlsCertificateKeyFile=pki["stranger"])


def _negotiated(address, ca: str) -> str:
    context = ssl.create_default_context(cafile=ca)
    with socket.create_connection(address, timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.version() or ""


def test_disabled_protocols(pki):
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], quiet=True,
                        tls_disabled_protocols=("TLS1_0", "TLS1_1", "TLS1_3")) as address:
        assert _negotiated(address, pki["ca"]) == "TLSv1.2"
        assert _ping(address, tls=True, tlsCAFile=pki["ca"])
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], quiet=True) as address:
        assert _negotiated(address, pki["ca"]) == "TLSv1.3"


def test_tls_with_scram(pki):
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], auth=True,
                        quiet=True) as address:
        first = pymongo.MongoClient(*address, tls=True, tlsCAFile=pki["ca"])
        first.admin.command("createUser", "u", pwd="p", roles=["root"])
        user = pymongo.MongoClient(*address, tls=True, tlsCAFile=pki["ca"], username="u", password="p")
        assert user.t.c.insert_one({"_id": 1}).inserted_id == 1


def test_bad_tls_options_are_refused(pki):
    with pytest.raises(TLSSetupError, match="need tlsCertificateKeyFile"):
        server_context("requireTLS", None)
    with pytest.raises(TLSSetupError, match="Unrecognized tlsProtocol: TLS9"):
        server_context("requireTLS", pki["server"], disabled_protocols=("TLS9",))
    with pytest.raises(TLSSetupError, match="contiguous"):
        server_context("requireTLS", pki["server"], disabled_protocols=("TLS1_2",))
    with pytest.raises(TLSSetupError, match="cannot read PEM key file"):
        server_context("requireTLS", pki["ca"])  # a certificate without its key
    assert server_context("disabled", None) is None
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "ginkgodb.cli", "serve", "--in-memory", "--port", "0",
                           "--tlsMode", "requireTLS"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert "need tlsCertificateKeyFile" in proc.stderr


def test_x509_authentication(pki):
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], tls_ca_file=pki["ca"],
                        tls_allow_connections_without_certificates=True, auth=True, quiet=True) as address:
        tls = {"tls": True, "tlsCAFile": pki["ca"]}
        first = pymongo.MongoClient(*address, **tls, tlsCertificateKeyFile=pki["client"])
        with pytest.raises(OperationFailure) as err:  # the localhost exception grants roles of admin only
            first["$external"].command("createUser", "CN=client", roles=[{"role": "readWrite", "db": "app"}])
        assert err.value.code == 13
        first.admin.command("createUser", "root", pwd="pw", roles=["root"])
        root = pymongo.MongoClient(*address, **tls, username="root", password="pw")
        root["$external"].command("createUser", "CN=client", roles=[{"role": "readWrite", "db": "app"}])
        with pytest.raises(OperationFailure) as err:
            first["$external"].command("createUser", "CN=other", roles=[])
        assert err.value.code == 13  # the localhost exception closed with the first user
        user = pymongo.MongoClient(*address, **tls, tlsCertificateKeyFile=pki["client"],
                                   authMechanism="MONGODB-X509")
        user.app.c.insert_one({"_id": 1})
        assert user.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == \
            [{"user": "CN=client", "db": "$external"}]
        with pytest.raises(OperationFailure) as err:
            user.other.c.find_one()
        assert err.value.code == 13
        info = user["$external"].command("usersInfo", "CN=client")["users"][0]
        assert info["mechanisms"] == ["external"] and "credentials" not in info
        named = pymongo.MongoClient(*address, **tls, tlsCertificateKeyFile=pki["client"], username="CN=client",
                                    authMechanism="MONGODB-X509")
        assert named.app.c.find_one() == {"_id": 1}
        wrong = pymongo.MongoClient(*address, **tls, tlsCertificateKeyFile=pki["client"], username="CN=someone",
                                    authMechanism="MONGODB-X509", serverSelectionTimeoutMS=3000)
        with pytest.raises(OperationFailure) as err:
            wrong.app.c.find_one()
        assert err.value.code == 18
        anonymous = pymongo.MongoClient(*address, **tls, maxPoolSize=1)
        with pytest.raises(OperationFailure) as err:
            anonymous["$external"].command("authenticate", mechanism="MONGODB-X509")
        assert err.value.code == 18 and "No verified subject name" in str(err.value)
        with pytest.raises(OperationFailure) as err:
            user.admin.command("authenticate", mechanism="MONGODB-X509")
        assert err.value.code == 18 and "$external" in str(err.value)
        with pytest.raises(OperationFailure) as err:
            root["$external"].command("createUser", "CN=x", pwd="p", roles=[])
        assert err.value.code == 2


def test_certificate_subjects_are_written_as_rfc_4514():
    from ginkgodb.server.tls import peer_subject

    class Transport:
        def __init__(self, cert):
            self.cert = cert

        def get_extra_info(self, name):
            return self if name == "ssl_object" else None

        def getpeercert(self):
            return self.cert
    subject = ((("countryName", "US"),), (("organizationName", "Acme, Inc."),),
               (("organizationalUnitName", "db"), ("commonName", "app+1")))
    assert peer_subject(Transport({"subject": subject})) == "OU=db+CN=app\\+1,O=Acme\\, Inc.,C=US"
    assert peer_subject(Transport({})) is None
    assert peer_subject(None) is None


def test_an_encrypted_key_opens_with_its_password(pki):
    with pytest.raises(TLSSetupError, match="cannot read PEM key file"):
        server_context("requireTLS", pki["server-encrypted"])          # no password: refused, not prompted
    with pytest.raises(TLSSetupError, match="cannot read PEM key file"):
        server_context("requireTLS", pki["server-encrypted"], certificate_key_file_password="wrong")
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server-encrypted"],
                        tls_certificate_key_file_password="pem-pw", quiet=True) as address:
        assert _ping(address, tls=True, tlsCAFile=pki["ca"])
        client = pymongo.MongoClient(*address, tls=True, tlsCAFile=pki["ca"])
        try:
            tls_opts = client.admin.command("getCmdLineOpts")["parsed"]["net"]["tls"]
            assert tls_opts["certificateKeyFilePassword"] == "<password>"
        finally:
            client.close()


def test_a_revoked_client_certificate_is_refused(pki):
    with pytest.raises(TLSSetupError, match="requires tlsCAFile"):
        server_context("requireTLS", pki["server"], crl_file=pki["crl"])
    with running_server(tls_mode="requireTLS", tls_certificate_key_file=pki["server"], tls_ca_file=pki["ca"],
                        tls_crl_file=pki["crl"], quiet=True) as address:
        assert _ping(address, tls=True, tlsCAFile=pki["ca"], tlsCertificateKeyFile=pki["client"])
        assert not _ping(address, tls=True, tlsCAFile=pki["ca"], tlsCertificateKeyFile=pki["revoked"])


def test_the_password_never_shows_in_get_cmd_line_opts():
    from ginkgodb.server.state import redacted_argv
    assert redacted_argv(["serve", "--tlsCertificateKeyFilePassword", "s3", "--port", "1"]) == \
        ["serve", "--tlsCertificateKeyFilePassword", "<password>", "--port", "1"]
    assert redacted_argv(["--tlsCertificateKeyFilePassword=s3"]) == ["--tlsCertificateKeyFilePassword=<password>"]
