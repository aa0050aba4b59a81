"""Test certificates made with `cryptography`: a CA, a server certificate for 127.0.0.1 and
localhost, a client certificate signed by the CA, and one signed by another CA."""
from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: str, key, issuer_name, issuer_key, *, ca: bool = False, server: bool = False):
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert, key=None) -> bytes:
    out = cert.public_bytes(serialization.Encoding.PEM)
    if key is not None:
        out += key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return out


def make_pki(out: Path) -> dict[str, str]:
    """ca.pem; server.pem (cert+key); client.pem (signed by the CA); stranger.pem (a client
    signed by another CA). Returns their paths by name."""
    ca_key, other_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("ginkgodb test CA", ca_key, _name("ginkgodb test CA"), ca_key, ca=True)
    other = _cert("another CA", other_key, _name("another CA"), other_key, ca=True)
    files = {"ca": _pem(ca)}
    for name, issuer, issuer_key, server in (("server", ca, ca_key, True), ("client", ca, ca_key, False),
                                             ("stranger", other, other_key, False)):
        key = ec.generate_private_key(ec.SECP256R1())
        files[name] = _pem(_cert(name, key, issuer.subject, issuer_key, server=server), key)
    paths = {}
    for name, data in files.items():
        (out / f"{name}.pem").write_bytes(data)
        paths[name] = str(out / f"{name}.pem")
    return paths
