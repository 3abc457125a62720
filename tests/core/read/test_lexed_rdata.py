"""The fast reader's lexer, octet for octet against dnspython: for each zone here, every
record's type, TTL and the record data it writes as octets (all of it for the types whose
names it keeps as octets: NAPTR, SVCB, HTTPS, RRSIG, NSEC, NSEC3, and the types without
names) are what dnspython's reading of the same file gives (rdata.to_wire). Forms it must
leave to dnspython make it decline. tests/c/lexed_records.c prints what the lexer read."""

from __future__ import annotations

import os
import subprocess

import dns.name
import dns.rdatatype
import pytest

from conftest import ROOT, TESTS, ZONES
from zonebake.config import ZoneSource
from zonebake.read.zonefile import parse_zone

ORIGIN = "Example.COM."
SIGNED_ZONES = sorted(p for p in (ZONES / "signed").glob("example.*.zone")
                      if p.name != "example.unsigned.zone")
HEAD = "$TTL 1h\n@ SOA ns1 hostmaster 1 2h 15M 2w 1h\n@ NS ns1\n"
# The lexer leaves these names as text for readzone.c: only their other octets are compared.
NAMES_APART = {"NS", "CNAME", "PTR", "DNAME", "MX", "SRV", "SOA"}
SIG = "aGVsbG8gd29ybGQ="
KEY = "mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ=="
ECH = "AEj+DQBEAQAgACAdd+scUi0IYFsXnUIU7ko2Nd9+F8M26pAGZVpz/KrWPgAEAAEAAWQVZWNoLXNpdGVzLmV4YW1wbGUubmV0AAA="

READ = [
    # NAPTR (RFC 3403): strings quoted or not, escapes, replacement relative, absolute, root
    'enum NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:info@example.com!" .',
    'enum NAPTR 100 20 S SIP+D2U "" _sip._udp',
    'enum NAPTR 10 0 "u" "E2U+h323" "!^\\\\+1(.*)$!h323:\\\\1@gw.example!" Gw.Example.NET.',
    'enum NAPTR ( 65535 65535 "A" "x"\n "caf\u00e9" @ )',
    # SVCB and HTTPS (RFC 9460): AliasMode, ServiceMode, each key this reader reads
    "svc HTTPS 0 www", "svc HTTPS 0 .", "svc SVCB 0 Pool.SVC.example.NET.",
    "svc SVCB 1 . alpn=h2,h3 port=8443 ipv4hint=192.0.2.1,192.0.2.2 mandatory=alpn,port",
    'svc HTTPS 1 . alpn="h2,h3" no-default-alpn ipv6hint=2001:db8::1,::ffff:192.0.2.1',
    'svc HTTPS 2 svc4 port="53" ech="' + ECH + '"', 'svc HTTPS 3 . no-default-alpn="" alpn=h3',
    'svc HTTPS 16 foo mandatory="ipv4hint,alpn" ipv4hint=192.0.2.9 alpn=h2',
    'svc HTTPS 1 . dohpath="/dns-query{?dns}" ohttp alpn=h2', 'svc HTTPS 1 . ohttp=""',
    "svc SVCB 1 . key65333 key9=abc mandatory=key65333,key9", "svc SVCB 1 . key65535=\"\"",
    # RRSIG (RFC 4034 §3.2): dates or seconds, units in the original TTL, signature split
    f"@ RRSIG SOA 13 2 3600 20261201000000 20261101000000 12345 @ {SIG}",
    f"@ RRSIG NS 8 2 1H 1796083200 1793404800 1 example.com. ( {SIG[:8]}\n {SIG[8:]} )",
    f"@ RRSIG TYPE65000 15 0 0 20000229235959 19700101000000 65535 Example.COM. {KEY}",
    f"@ RRSIG A 13 2 300 21060207062815 20380119031408 2 sub {SIG}",
    # NSEC (RFC 4034 §4) and NSEC3 (RFC 5155 §3.3)
    "@ NSEC ns1 A NS SOA RRSIG NSEC DNSKEY TYPE65000",
    "@ NSEC \\000.ns1 NS DS RRSIG NSEC", "@ NSEC Example.com.", "@ NSEC ns1 CAA A caa a",
    "abc NSEC3 1 1 10 aabb 0123456789ABCDEFGHIJKLMNOPQRSTUV A RRSIG",
    "abc NSEC3 1 0 0 - 0123456789abcdefghijklmnopqrstuv", "abc NSEC3 1 0 0 AABB 00 NS",
    "abc NSEC3 1 0 0 - 0000 A", "abc NSEC3 1 0 0 - 00000 A", "abc NSEC3 1 0 0 - 0000000 A",
    # names and strings with escapes, no longer the full reader's
    'a\\.b TXT x\\"y "q\\;r" \\059', "q\\(x TXT plain", "\\@ A 192.0.2.1",
    "e MX 10 mail\\.host", "\\065\\066 A 192.0.2.2", "x\\ y A 192.0.2.3",
    'c CAA 0 issue "ca.example.net; account=\\"a b\\""', 'c CAA 128 "tbs" ""',
    # what the lexer already read, still read so
    f"keys DNSKEY 257 3 13 {KEY}", 'h HINFO "PC" Linux', "t TXT a b \"c d\"",
    # base64 split inside a quantum, and padding after one: each field's whole quanta are
    # decoded four characters at a time, the rest one at a time (rdatatext.c)
    f"keys DNSKEY 257 3 13 {KEY[:6]} {KEY[6:11]} {KEY[11:]}", "keys DNSKEY 257 3 13 aGVsbG8=",
    "keys DNSKEY 257 3 13 aGVs bG8= ", "keys DNSKEY 257 3 13 aGVsbA==",
    "keys DNSKEY 257 3 13 aG Vs bA ==",
    "keys DNSKEY 257 3 13 +/+/AAAA", "keys DNSKEY 1 3 13 AAAA",
]

# Forms left to dnspython: it reads them, or says what is wrong.
DECLINED = [
    'enum NAPTR 100 10 "u" "E2U+sip" "!x!" "."', "enum NAPTR 100 10 u sip x",
    "svc HTTPS 0 . alpn=h2", "svc HTTPS 1 . ALPN=h2", "svc HTTPS 1 . alpn=h2 alpn=h3",
    "svc HTTPS 1 . alpn= h2", 'svc HTTPS 1 . alpn "h2"', "svc HTTPS 1 . docpath=a,b",
    "svc HTTPS 1 . key0=x", "svc HTTPS 1 . key07=x", "svc HTTPS 1 . key7=x",
    "svc HTTPS 1 . key65536=x", "svc HTTPS 1 . ohttp=x", "svc HTTPS 1 . key9 key9", "svc HTTPS 1 . alpn=h2\\,h3", "svc HTTPS 1 . mandatory=port",
    "svc HTTPS 1 . no-default-alpn", "svc HTTPS 1 . port=70000", "svc HTTPS 1 . alpn=h2,,h3",
    "svc HTTPS 1 . ipv4hint=192.0.2.01", "svc HTTPS 1 . ech=AAAA", 'svc HTTPS 1 . alpn=""',
    "svc HTTPS 1 . =alpn", "svc HTTPS 3 . no-default-alpn= alpn=h3", "svc HTTPS 1 . mandatory=alpn,alpn alpn=h2",
    f"@ RRSIG SOA ECDSAP256SHA256 2 3600 20261201000000 20261101000000 1 @ {SIG}",
    f"@ RRSIG SOA 13 2 3600 20261301000000 20261101000000 1 @ {SIG}",
    f"@ RRSIG SOA 13 2 3600 20230229000000 20261101000000 1 @ {SIG}",
    f"@ RRSIG SOA 13 2 3600 2026120100000 20261101000000 1 @ {SIG}",
    f"@ RRSIG SOA 13 2 3600 21060207062816 20261101000000 1 @ {SIG}",
    f"@ RRSIG SOA 13 2 3600 19691231235959 20261101000000 1 @ {SIG}",
    f"@ RRSIG SOA 13 256 3600 1 2 1 @ {SIG}", "@ RRSIG SOA 13 2 3600 1 2 1 @",
    f"@ RRSIG BOGUS 13 2 3600 1 2 1 @ {SIG}", f"@ RRSIG SOA 13 2 3600 1 2 1 @ \"{SIG}\"",
    "@ NSEC ns1 A BOGUS", "@ NSEC ns1 TYPE0", "@ NSEC a..b A", '@ NSEC ns1 "A"',
    "abc NSEC3 1 0 0 - 0123456789ABCDEFGHIJKLMNOPQRSTUW A", "abc NSEC3 1 0 0 - 000 A",
    "abc NSEC3 1 0 0 - 01 A", "abc NSEC3 1 0 0 - 0000= A", "abc NSEC3 1 0 0 abc 0000 A",
    "x\\\u00e9 A 192.0.2.1", 'q TXT "\\1"', "q TXT x\\", 'c CAA 0 "iss ue" x',
    "q\vq A 192.0.2.1", "svc HTTPS 1 a\\256", "svc HTTPS 1 a..b",
    # base64 that is not plain: a character off the alphabet, padding too early, too long,
    # or with more after it, a quantum left whole
    "keys DNSKEY 257 3 13 aGVs*G8g", "keys DNSKEY 257 3 13 aGVs=G8g",
    "keys DNSKEY 257 3 13 aGVsb===",
    "keys DNSKEY 257 3 13 aGVsbG8=aGVs", "keys DNSKEY 257 3 13 aGVsbG8= aGVs",
    "keys DNSKEY 257 3 13 aGVsbG8", "keys DNSKEY 257 3 13 aGVsbG8gd29y a",
    "keys DNSKEY 257 3 13 a-Vs",
]

# Whole files: the TTLs records without one get (dnspython's Reader, RFC 2308 §4).
TTL_FILES = [
    "@ 300 SOA ns1 hostmaster 1 2h 15M 2w 1h\n@ NS ns1\nns1 7200 A 192.0.2.1\nb A 192.0.2.2\n",
    "@ SOA ns1 hostmaster 1 2h 15M 2w 1h\n@ NS ns1\n$TTL 60\nb A 192.0.2.2\nc 5 A 192.0.2.3\n"
    "d A 192.0.2.4\n",
    "@ IN 30 SOA ns1 hostmaster 1 2 3 4 5\nns1 A 192.0.2.1\n$TTL 1d\n$INCLUDE inc.zone sub\n"
    "after A 192.0.2.9\n",
]
INCLUDED = "$TTL 99\nx A 192.0.2.7\n@ 42 NSEC x.sub A\ny A 192.0.2.8\n"
TTL_DECLINED = ["ns1 A 192.0.2.1\n@ SOA ns1 hostmaster 1 2 3 4 5\n"]


@pytest.fixture(scope="module")
def lexed_records(tmp_path_factory):
    binary = tmp_path_factory.mktemp("lexer") / "lexed_records"
    core = ROOT / "compiler" / "core"
    sanitize = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"] \
        if os.environ.get("ZONEBAKE_SANITIZE") else ["-O2"]
    sources = ["read/zonefile.c", "read/fields.c", "read/nametext.c", "read/rdatanames.c",
               "read/rdatatext.c", "base/util.c", "base/types.c", "base/names.c"]
    subprocess.run(["cc", "-std=gnu11", "-pthread", "-Wall", "-Werror", *sanitize,
                    f"-I{core}", f"-I{ROOT / 'runtime'}", str(TESTS / "c" / "lexed_records.c"),
                    *(str(core / s) for s in sources), "-o", str(binary)], check=True)
    return binary


def lex(binary, zone, origin=ORIGIN) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), origin, str(zone)], capture_output=True, text=True,
                          timeout=60)


def dnspython_reads(zone, origin=ORIGIN) -> list[tuple[int, int, str]]:
    source = ZoneSource(dns.name.from_text(origin).to_text(), zone, str(zone))
    return [(r.rdata.rdtype, r.ttl, r.rdata.to_wire().hex())
            for r in parse_zone(source).records]


def same_as_dnspython(binary, zone, origin=ORIGIN) -> int:
    result = lex(binary, zone, origin)
    assert result.returncode == 0, result.stderr
    lexed = [line.split() for line in result.stdout.splitlines()]
    expected = dnspython_reads(zone, origin)
    assert len(lexed) == len(expected)
    for fields, (rdtype, ttl, wire) in zip(lexed, expected):
        assert (int(fields[1]), int(fields[2])) == (rdtype, ttl), fields
        if dns.rdatatype.to_text(rdtype) not in NAMES_APART:
            assert fields[3] == wire, (dns.rdatatype.to_text(rdtype), fields)
    return len(lexed)


@pytest.mark.parametrize("record", READ)
def test_the_lexer_writes_dnspythons_octets(lexed_records, record, tmp_path):
    zone = tmp_path / "z.zone"
    zone.write_text(HEAD + record + "\n", encoding="utf-8")
    assert same_as_dnspython(lexed_records, zone) == 3


@pytest.mark.parametrize("zone", SIGNED_ZONES, ids=lambda p: p.name)
def test_the_lexer_reads_signers_output_as_dnspython_does(lexed_records, zone):
    """Zones as dnssec-signzone and ldns-signzone write them (tests/zones/signed/): every
    RRSIG, NSEC, NSEC3 and DNSKEY octet for octet."""
    assert same_as_dnspython(lexed_records, zone, "example.") > 20


@pytest.mark.parametrize("record", DECLINED)
def test_the_lexer_leaves_a_form_to_dnspython(lexed_records, record, tmp_path):
    zone = tmp_path / "z.zone"
    zone.write_text(HEAD + record + "\n", encoding="utf-8")
    result = lex(lexed_records, zone)
    assert result.returncode == 3 and "declined" in result.stderr, result.stdout


@pytest.mark.parametrize("text", TTL_FILES)
def test_records_without_a_ttl_get_dnspythons(lexed_records, text, tmp_path):
    zone = tmp_path / "z.zone"
    zone.write_text(text, encoding="utf-8")
    (tmp_path / "inc.zone").write_text(INCLUDED, encoding="utf-8")
    assert same_as_dnspython(lexed_records, zone) >= 4


@pytest.mark.parametrize("text", TTL_DECLINED)
def test_a_record_with_no_ttl_to_get_is_declined(lexed_records, text, tmp_path):
    zone = tmp_path / "z.zone"
    zone.write_text(text, encoding="utf-8")
    assert lex(lexed_records, zone).returncode == 3
