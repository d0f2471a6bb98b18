"""The guard decides from the URL and the resolved addresses alone: nothing here connects."""

import socket

import pytest

from ingest.url_guard import HostNotFound, UrlRefused, check_url

FORBIDDEN = [
    ("http://127.0.0.1/", "loopback"),
    ("http://127.8.9.10:8000/admin", "loopback"),
    ("http://localhost/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://0x7f.1/", "loopback"),  # 127.0.0.1 as inet_aton reads it
    ("http://2130706433/", "loopback"),  # 127.0.0.1 as one number
    ("http://10.1.2.3/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://172.31.255.254/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://100.64.0.1/", "shared address space"),
    ("http://100.127.255.254/", "shared address space"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://224.0.0.1/", "multicast"),
    ("http://239.255.255.250:1900/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "reserved"),
    ("http://[::]/", "unspecified"),
    ("http://[::ffff:127.0.0.1]/", "127.0.0.1 in IPv4-mapped form"),
    ("http://[::ffff:10.0.0.1]/", "10.0.0.1 in IPv4-mapped form"),
    ("http://[::ffff:169.254.169.254]/", "169.254.169.254 in IPv4-mapped form"),
    ("http://[::127.0.0.1]/", "127.0.0.1 in IPv4-compatible form"),
    ("http://[2002:7f00:0001::]/", "127.0.0.1 in 6to4 form"),
    ("http://[2002:c0a8:0101::1]/", "192.168.1.1 in 6to4 form"),
    ("http://[64:ff9b::a00:1]/", "10.0.0.1 in NAT64 form"),
    ("http://[64:ff9b:1::1]/", "local-use NAT64"),
    ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[fc00::1]/", "private"),
    ("http://[fd12:3456:789a::1]/", "private"),
    ("http://[ff02::1]/", "multicast"),
]


@pytest.mark.parametrize(("url", "reason"), FORBIDDEN)
def test_the_guard_refuses_every_non_public_address_form(url, reason, settings):
    settings.URL_ALLOW_LOOPBACK = False

    with pytest.raises(UrlRefused, match=reason) as refused:
        check_url(url)

    assert "Loupe does not fetch" in str(refused.value)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://93.184.216.34/file.txt", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("gopher://93.184.216.34/", "only http:// and https://"),
        ("javascript:alert(1)", "only http:// and https://"),
        ("//93.184.216.34/", "only http:// and https://"),
        ("http://user:pass@93.184.216.34/", "user name or password"),
        ("http://user@93.184.216.34/", "user name or password"),
        ("http:///path-only", "no host name"),
        ("http://93.184.216.34:http/", "not a valid web address"),
    ],
)
def test_the_guard_refuses_urls_of_the_wrong_form_before_resolving(url, reason):
    def resolver_that_must_not_run(*args, **kwargs):
        raise AssertionError("resolved a URL of the wrong form")

    with pytest.raises(UrlRefused, match=reason):
        check_url(url, resolve=resolver_that_must_not_run)


def test_the_guard_accepts_a_public_address_literal(settings):
    settings.URL_ALLOW_LOOPBACK = False

    checked = check_url("https://93.184.216.34/some page?q=ü#top")

    assert checked.addresses == ("93.184.216.34",)
    assert (checked.scheme, checked.host, checked.port) == ("https", "93.184.216.34", 443)
    assert checked.target == "/some%20page?q=%C3%BC"


def test_the_guard_accepts_a_6to4_address_of_a_public_ipv4(settings):
    settings.URL_ALLOW_LOOPBACK = False

    checked = check_url("http://[2002:5db8:d822::1]:8080/")

    assert checked.addresses == ("2002:5db8:d822::1",)
    assert checked.port == 8080


def fake_resolver(*addresses):
    def resolve(host, port, type=0):  # noqa: A002 - the name socket.getaddrinfo uses
        return [
            (
                socket.AF_INET6 if ":" in address else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (address, port),
            )
            for address in addresses
        ]

    return resolve


def test_a_host_with_one_private_address_among_public_ones_is_refused(settings):
    settings.URL_ALLOW_LOOPBACK = False
    resolve = fake_resolver("93.184.216.34", "10.0.0.5")

    with pytest.raises(UrlRefused, match=r"pages\.example \(address 10\.0\.0\.5\).*private"):
        check_url("https://pages.example/", resolve=resolve)


def test_a_host_with_only_public_addresses_keeps_all_of_them_for_the_connection(settings):
    settings.URL_ALLOW_LOOPBACK = False
    resolve = fake_resolver("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")

    checked = check_url("https://pages.example/a", resolve=resolve)

    assert checked.addresses == ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")
    assert checked.host == "pages.example"


def test_a_host_that_does_not_resolve_says_so():
    def resolve(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(HostNotFound, match="pages.invalid could not be found"):
        check_url("https://pages.invalid/", resolve=resolve)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/", "http://127.1.2.3/", "http://[::1]/"])
def test_allowing_loopback_lets_loopback_through(url, settings):
    settings.URL_ALLOW_LOOPBACK = True

    assert check_url(url).addresses


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/",
        "http://0.0.0.0/",
        "http://[::ffff:127.0.0.1]/",
        "http://[2002:7f00:0001::]/",
        "http://[fe80::1]/",
    ],
)
def test_allowing_loopback_allows_nothing_else(url, settings):
    settings.URL_ALLOW_LOOPBACK = True

    with pytest.raises(UrlRefused):
        check_url(url)
