"""The quick path for plain zone files (compiler/fastparse.py) reads exactly the records
dnspython's Reader reads, or hands the file to the Reader: never a different record, never
a file the Reader would refuse."""

from __future__ import annotations

from pathlib import Path

import dns.name
import pytest

from conftest import ROOT, ZONES
from zonebake.config import ZoneSource
from zonebake.errors import CompileError
from zonebake.fastparse import parse_plain
from zonebake.parse import parse_zone

PLAIN = """$ORIGIN plain.example.
$TTL 3600 ; the default
@ IN SOA ns1 hostmaster.plain.example. (
        2026112101 ; serial
        7200 900 1209600 300 )
@ NS ns1
  NS ns2.plain.example.
@ 600 IN MX 10 mx1
@ IN 700 MX 20 Mx2.Elsewhere.
ns1 A 192.0.2.1
ns2 AAAA 2001:db8:0:0::2
mx1 A 192.0.2.25
WWW.Mixed.Case CNAME @
\t300 TXT "spaces and ; semicolons" "two strings"   ; and a comment
txt TXT word another
caa CAA 0 issue "ca.example"
srv._tcp SRV 10 5 443 www
ptr PTR www.plain.example.
$ORIGIN sub
host A 192.0.2.80
$TTL 1h
host AAAA 2001:db8::80
*.wild A 192.0.2.81
absolute.plain.example. A 192.0.2.82
"""


def source(path: Path, origin: str = "plain.example.") -> ZoneSource:
    return ZoneSource(dns.name.from_text(origin), path, str(path))


def by_reader(src: ZoneSource) -> list[tuple]:
    return [(r.name.labels, r.ttl, r.rdata, r.rdata.to_text(), r.position.line)
            for r in parse_zone(src, plain=False).records]


def by_quick_path(src: ZoneSource) -> list[tuple] | None:
    records = parse_plain(src, lambda: None)
    if records is None:
        return None
    return [(name.labels, ttl, rdata, rdata.to_text(), line)
            for name, ttl, rdata, line in records]


def test_plain_file_is_read_as_the_reader_reads_it(tmp_path):
    path = tmp_path / "plain.zone"
    path.write_text(PLAIN)
    quick = by_quick_path(source(path))
    assert quick is not None, "the quick path should read this file"
    assert quick == by_reader(source(path))
    assert len(quick) == 18
    # A multi-line SOA at its first line; a continued owner; a TTL after the class.
    apex = (b"plain", b"example", b"")
    assert [(r[0], r[3], r[4]) for r in quick[:3]] == [
        (apex, "ns1.plain.example. hostmaster.plain.example. 2026112101 7200 900 1209600 300", 3),
        (apex, "ns1.plain.example.", 6), (apex, "ns2.plain.example.", 7)]
    assert (quick[4][1], quick[4][3]) == (700, "20 Mx2.Elsewhere.")
    assert quick[-1][0] == (b"absolute", b"plain", b"example", b"")


@pytest.mark.parametrize("config", ["zonebake.toml", "tests/zones/testset.toml",
                                    "tests/zones/resolution.toml", "tests/zones/rfc4592.toml"])
def test_every_test_zone_reads_alike_or_goes_to_the_reader(config):
    from zonebake.config import load_toml
    for src in load_toml(ROOT / config).zones:
        quick = by_quick_path(src)
        if quick is not None:
            assert quick == by_reader(src), src.display


@pytest.mark.parametrize("zone", sorted((ZONES / "broken").glob("*.zone")),
                         ids=lambda p: p.stem)
def test_a_file_the_reader_refuses_goes_to_the_reader(zone):
    src = source(zone, "example.")
    try:
        expected = by_reader(src)
    except CompileError:
        assert by_quick_path(src) is None
    else:
        assert by_quick_path(src) in (None, expected)


@pytest.mark.parametrize("line", [
    "bad A 192.0.2.256",
    "bad A 192.0.2.01",
    "bad AAAA 2001:db8::1::2",
    "a..b A 192.0.2.1",
    "x" * 64 + " A 192.0.2.1",
    ".".join(["abcdefghi"] * 26) + " A 192.0.2.1",
    "bad CH A 192.0.2.1",
    "bad A",
    "bad NOTATYPE 1",
    "bad 4294967296 A 192.0.2.1",
    "bad MX 65536 mx",
    'bad TXT "' + "x" * 256 + '"',
    'bad TXT "unterminated',
    "bad A 192.0.2.1 extra",
    "bad\\.escape A 192.0.2.1",
    "$INCLUDE other.zone",
    "$GENERATE 1-3 host$ A 192.0.2.$",
    "bad A ( 192.0.2.1",
])
def test_anything_unusual_goes_to_the_reader(tmp_path, line):
    path = tmp_path / "unusual.zone"
    path.write_text("$TTL 300\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\n"
                    + line + "\n")
    assert by_quick_path(source(path)) is None


def test_records_before_any_ttl_go_to_the_reader(tmp_path):
    path = tmp_path / "nottl.zone"
    path.write_text("@ 300 SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\n")
    assert by_quick_path(source(path)) is None
