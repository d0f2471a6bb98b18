"""HTTPS to a pinned address: the socket goes to the checked IP, while TLS still names the
URL's host (SNI) and checks the certificate against that name, not against the IP."""

import datetime
import socket
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import ingest.fetch
from ingest.fetch import FetchError, fetch
from ingest.tests import web_site


def self_signed(tmp_path, name: str):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_site(tmp_path, loopback_allowed, monkeypatch):
    """The test site over TLS with a certificate for pages.example, which resolves to
    127.0.0.1; the fetcher trusts that certificate and nothing else."""
    cert_path, key_path = self_signed(tmp_path, "pages.example")
    server_names = []
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_path, key_path)
    server_context.sni_callback = lambda sock, name, context: server_names.append(name)

    with web_site.running() as server:
        # The handshake happens in the handler's thread, not in accept(): a client that
        # never speaks TLS must not block the server's loop (and with it, shutdown).
        server.socket = server_context.wrap_socket(
            server.socket, server_side=True, do_handshake_on_connect=False
        )
        server.server_names = server_names
        port = server.server_address[1]
        real_getaddrinfo = socket.getaddrinfo
        real_context = ssl.create_default_context

        def resolve(host, *args, **kwargs):
            if host in {"pages.example", "other.example"}:
                return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", resolve)
        monkeypatch.setattr(
            ingest.fetch.ssl,
            "create_default_context",
            lambda: real_context(cafile=str(cert_path)),
        )
        yield server


def test_https_to_the_checked_address_sends_the_host_name_and_verifies_it(tls_site):
    port = tls_site.server_address[1]

    fetched = fetch(f"https://pages.example:{port}/page.html")

    assert fetched.content == web_site.PAGE
    assert tls_site.server_names == ["pages.example"]
    assert tls_site.seen == [("/page.html", f"pages.example:{port}")]


def test_a_certificate_for_another_name_is_refused(tls_site):
    port = tls_site.server_address[1]

    with pytest.raises(FetchError, match="certificate is not valid"):
        fetch(f"https://other.example:{port}/page.html")

    assert tls_site.seen == []


def test_https_to_an_address_literal_needs_a_certificate_for_that_address(tls_site):
    port = tls_site.server_address[1]

    with pytest.raises(FetchError, match="certificate is not valid"):
        fetch(f"https://127.0.0.1:{port}/page.html")
