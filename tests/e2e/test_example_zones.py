"""The example zone set of zones/ and zonebake.toml: what a new user builds with `make run`."""

from __future__ import annotations

import os
import struct
import subprocess

import dns.message
import dns.query
import dns.rcode
import pytest

from conftest import AS_ROOT, ROOT, ZONES, Server, build_set, run_zonebake
from dnsassert import assert_response, rrs


@pytest.fixture(scope="module")
def example_binary(tmp_path_factory):
    return build_set(tmp_path_factory.mktemp("example"), "-c", str(ROOT / "zonebake.toml"))


@pytest.fixture(scope="module")
def example_server(example_binary):
    server = Server(example_binary)
    yield server
    server.stop()


@pytest.mark.skipif(bool(os.environ.get("ZONEBAKE_SANITIZE")),
                    reason="sanitizer builds link dynamically: ASan has no static runtime")
def test_binary_is_statically_linked(example_binary):
    """No ELF program interpreter and no dynamic section: it runs on any Linux of its arch."""
    elf = example_binary.read_bytes()
    assert elf[:4] == b"\x7fELF" and elf[4] == 2  # 64-bit
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    types = [struct.unpack_from("<I", elf, phoff + i * phentsize)[0] for i in range(phnum)]
    PT_DYNAMIC, PT_INTERP = 2, 3
    assert PT_INTERP not in types and PT_DYNAMIC not in types


@pytest.mark.parametrize("qname,qtype,expected,additional", [
    ("www.example.com.", "A", ["www.example.com. 3600 IN A 192.0.2.80"], []),
    ("www.example.com.", "AAAA", ["www.example.com. 3600 IN AAAA 2001:db8:0:1::80"], []),
    ("example.com.", "MX", ["example.com. 3600 IN MX 10 mx1.example.com.; 20 mx2.example.com."],
     ["mx1.example.com. 3600 IN A 192.0.2.25", "mx1.example.com. 3600 IN AAAA 2001:db8:0:1::25",
      "mx2.example.com. 3600 IN A 192.0.2.26", "mx2.example.com. 3600 IN AAAA 2001:db8:0:2::26"]),
    ("blog.example.com.", "A", ["blog.example.com. 3600 IN CNAME www.example.com.",
                                "www.example.com. 3600 IN A 192.0.2.80"], []),
    ("_sip._tcp.example.com.", "SRV", ["_sip._tcp.example.com. 3600 IN SRV 10 60 5060 "
                                       "sip.example.com."],
     ["sip.example.com. 3600 IN A 192.0.2.60", "sip.example.com. 3600 IN AAAA 2001:db8:0:1::60"]),
    ("node-07.k8s.example.com.", "A", ["node-07.k8s.example.com. 3600 IN A 203.0.113.7"], []),
    ("1.2.0.192.in-addr.arpa.", "PTR", ["1.2.0.192.in-addr.arpa. 86400 IN PTR ns1.example.com."],
     []),
])
def test_example_answers(example_server, qname, qtype, expected, additional):
    assert_response(example_server.query(qname, qtype), dns.rcode.NOERROR, True,
                    answer=rrs(*expected), additional=rrs(*additional))


def test_example_negative_answers(example_server):
    soa = ("example.com. 300 IN SOA ns1.example.com. hostmaster.example.com. "
           "2026112101 7200 900 1209600 300")
    assert_response(example_server.query("nope.example.com.", "A"), dns.rcode.NXDOMAIN, True,
                    authority=rrs(soa))
    assert_response(example_server.query("k8s.example.com.", "A"), dns.rcode.NOERROR, True,
                    authority=rrs(soa))


def test_default_listen_address_comes_from_the_toml(testset_binary):
    """tests/zones/testset.toml's [server] listen is 127.0.0.1:0; no --listen uses it."""
    server = Server(testset_binary, listen=())
    try:
        assert server.address[0] == "127.0.0.1" and server.address[1] != 0
        assert server.query("www.example.", "A").rcode() == dns.rcode.NOERROR
    finally:
        server.stop()


def test_several_listen_addresses_ipv4_and_ipv6(testset_binary):
    server = Server(testset_binary, listen=("127.0.0.1:0", "[::1]:0"))
    try:
        assert [a[0] for a in server.addresses] == ["127.0.0.1", "::1"]
        for host, port in server.addresses:
            query = dns.message.make_query("www.example.", "AAAA", use_edns=False)
            response = dns.query.udp(query, host, port=port, timeout=2)
            assert_response(response, dns.rcode.NOERROR, True,
                            answer=rrs("www.example. 3600 IN AAAA 2001:db8::10"))
    finally:
        server.stop()


# (An address without a port is port 53: tests/ops/test_server_defaults.py. Bare IPv6 is
# refused: in ::1:53 the port could not be told from the address.)
@pytest.mark.parametrize("address", ["127.0.0.1:99999", "::1:53", "::1", "[::1]x",
                                     "localhost:53", "[127.0.0.1]:53"])
def test_bad_listen_address_is_refused_at_start(testset_binary, address):
    result = subprocess.run([str(testset_binary), *AS_ROOT, "--listen", address],
                            capture_output=True, text=True, timeout=5)
    assert result.returncode == 1
    assert f"bad listen address '{address}'" in result.stderr


def test_bad_listen_address_in_toml(tmp_path):
    config = tmp_path / "zonebake.toml"
    config.write_text(f'[server]\nlisten = ["localhost:53"]\n[[zone]]\norigin = "example."\n'
                      f'file = "{ZONES / "example.zone"}"\n')
    result = run_zonebake("build", "-c", str(config), "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "bad listen address 'localhost:53'" in result.stderr
