"""Zone set configuration (compiler/config.py): the quick reading of plain origins gives
what dnspython's from_text gives, as it writes it, and a bad origin is refused with the same
reason; the same origin twice is refused, however it is spelled; the
server's settings and a zone's dnssec table are read, or refused clearly."""

from __future__ import annotations

from pathlib import Path

import dns.name
import pytest

from zonebake.config import ZoneSource, load_toml as load_config, parse_origin, zones_from_args
from zonebake.errors import UsageError

ORIGINS = ["example.com.", "EXAMPLE.Com.", "a.b-c.d_e.*.x.", "x" * 63 + ".test.",
           ".".join(["a" * 63] * 3) + "." + "b" * 61 + ".", "example.com", ".", "@",
           r"ex\.ample.com.", "ex\\065mple.com.", "bücher.example.", "EXAMPLE.Com", "x" * 63,
           ".".join(["a" * 63] * 3) + "." + "b" * 61, "*.x", "a-b_c"]
BAD = ["x" * 64 + ".test.", ".".join(["a" * 63] * 4) + ".", "a..b.", "..", ".a.", "x" * 64,
       ".".join(["a" * 63] * 3) + "." + "b" * 62, "a..b"]


@pytest.mark.parametrize("text", ORIGINS)
def test_an_origin_is_the_name_dnspython_reads(text):
    ours, theirs = parse_origin(text, "here"), dns.name.from_text(text)
    assert ours == theirs.to_text()  # the spelling too, not only equal ignoring case
    zone = ZoneSource(ours, Path("z.zone"), "z.zone")
    assert zone.origin == theirs and zone.origin.labels == theirs.labels


@pytest.mark.parametrize("first,second", [("example.com.", "EXAMPLE.Com."),
                                          ("example.com.", r"ex\097mple.com"),
                                          (r"a\.b.test.", r"A\.B.test.")])
def test_an_origin_given_twice_is_refused_however_spelled(first, second):
    with pytest.raises(UsageError) as refused:
        zones_from_args([f"{first}=a.zone", f"{second}=b.zone"])
    again = dns.name.from_text(second)
    assert str(refused.value) == f"command line: zone {again} is given twice"


def test_origins_that_differ_in_an_escaped_octet_are_two_zones():
    config = zones_from_args([r"a\.b.test.=a.zone", "a.b.test.=b.zone", r"\065.test.=c.zone",
                              r"\193.test.=d.zone", r"\225.test.=e.zone"])
    assert [z.origin_text for z in config.zones] == [r"a\.b.test.", "a.b.test.", "A.test.",
                                                      r"\193.test.", r"\225.test."]


@pytest.mark.parametrize("text", BAD)
def test_a_bad_origin_is_refused_for_dnspython_reason(text):
    with pytest.raises(Exception) as theirs:
        dns.name.from_text(text)
    with pytest.raises(UsageError) as ours:
        parse_origin(text, "zonebake.toml: zone #1")
    assert str(ours.value) == f"zonebake.toml: zone #1: bad zone origin {text!r}: {theirs.value}"


def config_with(tmp_path, server: str):
    (tmp_path / "z.zone").write_text("@ 300 SOA ns h 1 2 3 4 5\n")
    path = tmp_path / "zonebake.toml"
    path.write_text(f'[server]\n{server}\n[[zone]]\norigin = "example."\nfile = "z.zone"\n')
    return path


def test_rate_limiting_and_cookie_settings_are_read(tmp_path):
    config = load_config(config_with(tmp_path, 'rrl-responses-per-second = 10\nrrl-slip = 0\n'
                                     'rrl-ipv4-prefix = 32\nrrl-ipv6-prefix = 64\n'
                                     'cookie-secret = "E5E973E5a6b2a43f48e7dc849e37bfcf"'))
    server = config.server
    assert (server.rrl_responses_per_second, server.rrl_slip, server.rrl_ipv4_prefix,
            server.rrl_ipv6_prefix) == (10, 0, 32, 64)
    assert server.cookie_secret == bytes.fromhex("e5e973e5a6b2a43f48e7dc849e37bfcf")


def test_the_defaults_are_the_peers(tmp_path):
    server = load_config(config_with(tmp_path, "")).server
    assert (server.rrl_responses_per_second, server.rrl_slip, server.rrl_ipv4_prefix,
            server.rrl_ipv6_prefix, server.cookie_secret) == (0, 2, 24, 56, b"")


@pytest.mark.parametrize("line,message", [
    ('cookie-secret = "e5e973"', "cookie-secret must be 32 hexadecimal digits"),
    ('cookie-secret = "e5e973e5a6b2a43f48e7dc849e37bfcg"', "cookie-secret must be 32"),
    ("cookie-secret = 5", "cookie-secret must be 32"),
    ("rrl-slip = 11", "rrl-slip must be from 0 to 10"),
    ("rrl-ipv4-prefix = 0", "rrl-ipv4-prefix must be from 1 to 32"),
    ("rrl-ipv6-prefix = 129", "rrl-ipv6-prefix must be from 1 to 128"),
    ("rrl-responses-per-second = -1", "rrl-responses-per-second must be from 0 to 1000000"),
    ("tcp-max-connections-per-source = 0", "tcp-max-connections-per-source must be from 1"),
    ("threads = 0", "[server] threads must be from 1 to 1024"),
    ('metrics = "localhost:9153"', "[server] metrics: bad listen address 'localhost:9153'"),
    ("user = 5", "[server] user must be a str"),
    ('xdp = ""', "[server] xdp: bad interface ''"),
    ('xdp = ["eth0@0"]', "[server] xdp: bad interface 'eth0@0'"),
    ('xdp = ["eth0@65536"]', "[server] xdp: bad interface 'eth0@65536'"),
    ('xdp = ["eth0@dns"]', "[server] xdp: bad interface 'eth0@dns'"),
    ('xdp = ["a-name-of-16-chars"]', "[server] xdp: bad interface 'a-name-of-16-chars'"),
    ('xdp = ["eth/0"]', "[server] xdp: bad interface 'eth/0'"),
    ('xdp = ["eth0", "eth0@5300"]', "[server] xdp: eth0 is given twice"),
    ("xdp = 5", "[server] xdp must be an interface or a list of interfaces"),
    ('xdp-optional = "yes"', "[server] xdp-optional must be a bool"),
])
def test_bad_settings_are_refused_clearly(tmp_path, line, message):
    with pytest.raises(UsageError) as error:
        load_config(config_with(tmp_path, line))
    assert message in str(error.value) and "[server]" in str(error.value)


def test_af_xdp_interfaces_are_read(tmp_path):
    server = load_config(config_with(tmp_path, 'xdp = ["eth0", "enp1s0f1@5300"]\n'
                                               "xdp-optional = true")).server
    assert (server.xdp, server.xdp_optional) == (("eth0", "enp1s0f1@5300"), True)
    server = load_config(config_with(tmp_path, 'xdp = "eth1"')).server
    assert (server.xdp, server.xdp_optional) == (("eth1",), False)
    assert load_config(config_with(tmp_path, "")).server.xdp == ()


def signed_config(tmp_path, table: str):
    path = config_with(tmp_path, "")
    path.write_text(path.read_text() + f"dnssec = {table}\n")
    return path


def test_a_dnssec_table_is_read_with_the_defaults_of_the_issue(tmp_path):
    [zone] = load_config(signed_config(tmp_path, '{ keys = "k" }')).zones
    policy = zone.dnssec
    assert (policy.keys, policy.denial, policy.nsec3_opt_out, policy.signature_validity) == \
        (tmp_path / "k", "nsec3", False, 14 * 86400)
    [zone] = load_config(signed_config(tmp_path, '{ keys = "/k", denial = "nsec", '
                                                 'signature-validity = "30d" }')).zones
    assert (zone.dnssec.keys, zone.dnssec.denial, zone.dnssec.signature_validity) == \
        (Path("/k"), "nsec", 30 * 86400)
    [zone] = load_config(config_with(tmp_path, "")).zones
    assert zone.dnssec is None


@pytest.mark.parametrize("table,message", [
    ('"k"', 'expected a table with keys = "DIRECTORY"'),
    ('{ denial = "nsec" }', 'expected a table with keys = "DIRECTORY"'),
    ('{ keys = "k", algorithm = "ed25519" }', "unknown key(s): algorithm"),
    ('{ keys = "k", denial = "nsec5" }', "denial must be \"nsec\" or \"nsec3\", not 'nsec5'"),
    ('{ keys = "k", nsec3-opt-out = "yes" }', "nsec3-opt-out must be true or false"),
    ('{ keys = "k", denial = "nsec", nsec3-opt-out = true }',
     'nsec3-opt-out needs denial = "nsec3"'),
    ('{ keys = "k", signature-validity = "12h" }', "signature-validity must be at least a day"),
    ('{ keys = "k", signature-validity = "two weeks" }', "signature-validity: expected seconds or a duration"),
])
def test_a_bad_dnssec_table_is_refused_clearly(tmp_path, table, message):
    with pytest.raises(UsageError) as error:
        load_config(signed_config(tmp_path, table))
    assert f"zone #1: dnssec: {message}" in str(error.value)


def test_a_listen_address_without_a_port_is_port_53(tmp_path):
    config = load_config(config_with(tmp_path, 'listen = ["127.0.0.1", "[::1]", "[2001:db8::1]", '
                                                '"192.0.2.1:5300", "[::1]:0"]'))
    assert config.server.listen == ("127.0.0.1:53", "[::1]:53", "[2001:db8::1]:53",
                                    "192.0.2.1:5300", "[::1]:0")
    with pytest.raises(UsageError, match="IPv6 addresses are written in brackets"):
        load_config(config_with(tmp_path, 'listen = ["::1:53"]'))


def test_the_servers_own_defaults_are_read(tmp_path):
    config = load_config(config_with(tmp_path, 'user = "zonebake"\ncontrol = "/run/zonebake/c"\n'
                                                'metrics = "127.0.0.1:9153"\nthreads = 4'))
    server = config.server
    assert (server.user, server.control, server.metrics, server.threads) == \
        ("zonebake", "/run/zonebake/c", "127.0.0.1:9153", 4)


def primary_config(tmp_path, *zones: str) -> Path:
    """A set of zones with these extra lines each (primary, tsig)."""
    text = "".join(f'[[zone]]\norigin = "z{i}.example."\nfile = "z{i}.zone"\n{lines}\n'
                   for i, lines in enumerate(zones))
    path = tmp_path / "zonebake.toml"
    path.write_text(text)
    return path


def test_a_primary_and_its_tsig_key_are_read(tmp_path):
    first, second, third = load_config(primary_config(
        tmp_path, 'primary = "192.0.2.1:5353"\ntsig = "HMAC-SHA256:xfr.:c2VjcmV0"',
        'primary = "[2001:db8::1]"', "")).zones
    assert (first.primary.address, first.primary.port, str(first.primary)) == \
        ("192.0.2.1", 5353, "192.0.2.1:5353")
    key = first.primary.tsig
    assert (key.algorithm, key.name, key.secret) == \
        ("hmac-sha256", dns.name.from_text("xfr."), b"secret")
    assert (second.primary.address, second.primary.port, second.primary.tsig) == \
        ("2001:db8::1", 53, None)
    assert str(second.primary) == "[2001:db8::1]:53"
    assert third.primary is None


@pytest.mark.parametrize("lines,message", [
    ('tsig = "hmac-sha256:k.:c2VjcmV0"', 'tsig needs primary = "ADDRESS:PORT"'),
    ("primary = 53", 'primary must be a string, "ADDRESS:PORT"'),
    ('primary = "ns1.example:53"', "primary: bad listen address 'ns1.example:53'"),
    ('primary = "192.0.2.1:53"\ntsig = "hmac-md5:k.:c2VjcmV0"',
     'tsig must be "ALGORITHM:KEYNAME:BASE64SECRET" with an ALGORITHM of hmac-sha1, '
     'hmac-sha224, hmac-sha256, hmac-sha384, hmac-sha512'),
    ('primary = "192.0.2.1:53"\ntsig = "hmac-sha256:c2VjcmV0"', 'tsig must be "ALGORITHM:'),
    ('primary = "192.0.2.1:53"\ntsig = "hmac-sha256:k.:not base64!"',
     "tsig: the secret is not base64"),
    ('primary = "192.0.2.1:53"\ntsig = "hmac-sha256:a..b:c2VjcmV0"', "tsig: bad key name 'a..b'"),
])
def test_a_bad_primary_is_refused_clearly(tmp_path, lines, message):
    with pytest.raises(UsageError) as error:
        load_config(primary_config(tmp_path, lines))
    assert f"zonebake.toml: zone #1: {message}" in str(error.value)


def test_one_key_name_has_one_secret(tmp_path):
    with pytest.raises(UsageError, match="TSIG key k. is given with two secrets or algorithms"):
        load_config(primary_config(tmp_path, 'primary = "192.0.2.1"\ntsig = "hmac-sha256:k.:YQ=="',
                                   'primary = "192.0.2.1"\ntsig = "hmac-sha256:k.:Yg=="'))
