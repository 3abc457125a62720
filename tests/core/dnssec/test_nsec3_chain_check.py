"""The check of a zone given signed with NSEC3 (compiler/core/dnssec/chaincheck.c): every
authoritative name and empty non-terminal matched by an NSEC3 whose bitmap lists its types,
an insecure delegation left to an opt-out NSEC3 that covers it (RFC 5155 §7.1), each entry
naming the next hash, and an entry matching no name a warning. The names are checked against
the chain in hash order; what is wrong is said in the zone's order, each at its name's first
record, as BIND's dnssec-signzone signed the zone and then a record of it was taken out or
changed."""

from __future__ import annotations

from pathlib import Path

import dns.dnssec
import dns.name
import dns.rdatatype
import dns.rdtypes.util
import dns.zone
import pytest

from conftest import require
from signzone import sign_salted
from zonebake.config import zones_from_args
from zonebake.core import run as core
from zonebake.dnssec import signatures
from zonebake.errors import CompileError

ORIGIN = dns.name.from_text("example.")

# `many` holds more types than the check carries with a name (eight, nine with RRSIG);
# `a.b.ent` makes two empty non-terminals; `sub` is an insecure delegation.
UNSIGNED = """$TTL 300
@ SOA ns hostmaster 1 7200 900 1209600 300
@ NS ns
ns A 192.0.2.1
many A 192.0.2.2
many AAAA 2001:db8::2
many TXT "many"
many MX 10 ns
many HINFO "PC" "Linux"
many SSHFP 4 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
many CAA 0 issue "ca.example.net"
many RP hostmaster.example. .
a.b.ent A 192.0.2.3
lone A 192.0.2.4
sub NS ns.sub
ns.sub A 192.0.2.5
"""


@pytest.fixture(scope="module")
def signed_text(tmp_path_factory) -> str:
    keygen, signzone = require("bind9-utils", "dnssec-keygen", "dnssec-signzone")
    directory = tmp_path_factory.mktemp("signed")
    return sign_salted(UNSIGNED, "example.", directory, "-", 0, keygen, signzone).read_text()


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(signatures, "cache_path", lambda origins: tmp_path / "verified")


def hashed(name: str) -> dns.name.Name:
    """The owner of NAME's NSEC3 (no salt, no iterations), spelled as dnssec-signzone does."""
    label = dns.dnssec.nsec3_hash(dns.name.from_text(name, ORIGIN), None, 0, 1)
    return dns.name.from_text(label.upper(), ORIGIN)


def rewritten(text: str, tmp_path: Path, change) -> Path:
    """The signed zone, CHANGE applied to it as a dnspython zone, written one record a line."""
    zone = dns.zone.from_text(text, ORIGIN, relativize=False, check_origin=False)
    change(zone)
    path = tmp_path / "example.zone"
    path.write_text(zone.to_text(relativize=False))
    return path


def line_of(path: Path, owner: str, rdtype: str) -> int:
    """The line of OWNER's first record of RDTYPE."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split()
        if fields and fields[0].lower() == owner.lower() and rdtype in fields[2:4]:
            return number
    raise AssertionError(f"no {owner} {rdtype} in {path}")


def findings(path: Path) -> list[tuple[int, str, str]]:
    """(line, severity, message) of what the build says of the zone at PATH."""
    try:
        baked = core.bake(zones_from_args([f"example.={path}"]), path.with_suffix(".bin"))
        said = [("warning", d) for d in baked.warnings]
    except CompileError as refused:
        said = [(d.severity, d) for d in refused.diagnostics]
    return [(d.position.line, severity, d.message) for severity, d in said
            if d.position.file == str(path)]


def drop(owner: dns.name.Name, *types: int):
    def change(zone: dns.zone.Zone) -> None:
        for rdtype in types:
            zone.delete_rdataset(owner, rdtype)
            zone.delete_rdataset(owner, dns.rdatatype.RRSIG, rdtype)
    return change


def test_the_zone_as_signed_passes(signed_text, tmp_path):
    path = rewritten(signed_text, tmp_path, lambda zone: None)
    assert findings(path) == []


def test_a_name_without_its_nsec3_is_refused_at_its_first_record(signed_text, tmp_path):
    path = rewritten(signed_text, tmp_path, drop(hashed("many"), dns.rdatatype.NSEC3))
    found = [f for f in findings(path) if "has no NSEC3 record" in f[2]]
    assert found == [(line_of(path, "many.example.", "A"), "error",
                      "many.example. has no NSEC3 record (RFC 5155 §7.1)")]


def test_an_empty_non_terminal_without_its_nsec3_is_refused(signed_text, tmp_path):
    path = rewritten(signed_text, tmp_path, drop(hashed("b.ent"), dns.rdatatype.NSEC3))
    found = [f for f in findings(path) if "has no NSEC3 record" in f[2]]
    # Said at the first record of the name below it that makes it.
    assert found == [(line_of(path, "a.b.ent.example.", "A"), "error",
                      "b.ent.example. has no NSEC3 record (RFC 5155 §7.1)")]


def test_an_insecure_delegation_under_an_nsec3_without_opt_out_is_refused(signed_text,
                                                                         tmp_path):
    # dnssec-signzone without -A gives the delegation an NSEC3 of its own: taken out, the
    # NSEC3 that covers it is not opt-out.
    path = rewritten(signed_text, tmp_path, drop(hashed("sub"), dns.rdatatype.NSEC3))
    found = [f for f in findings(path) if "has no NSEC3 record" in f[2]]
    assert found == [(line_of(path, "sub.example.", "NS"), "error",
                      "sub.example. has no NSEC3 record, and the NSEC3 that covers it is "
                      "not opt-out (RFC 5155 §7.1)")]


def bitmap_types(windows) -> list[int]:
    """The types an NSEC3's type bitmap lists (RFC 4034 §4.1.2)."""
    return [window * 256 + octet * 8 + bit for window, bitmap in windows
            for octet, value in enumerate(bitmap) for bit in range(8) if value & 0x80 >> bit]


def test_a_bitmap_that_leaves_out_one_of_many_types_is_refused(signed_text, tmp_path):
    owner = hashed("many")

    def change(zone: dns.zone.Zone) -> None:
        rdataset = zone.find_rdataset(owner, dns.rdatatype.NSEC3)
        [nsec3] = list(rdataset)
        kept = [t for t in bitmap_types(nsec3.windows) if t != dns.rdatatype.HINFO]
        rdataset.clear()
        rdataset.add(nsec3.replace(
            windows=dns.rdtypes.util.Bitmap.from_rdtypes(kept).windows))
    path = rewritten(signed_text, tmp_path, change)
    assert findings(path) == [(
        line_of(path, str(owner), "NSEC3"), "error",
        f"NSEC3 at {owner} lists A MX TXT RP AAAA SSHFP RRSIG CAA, but many.example. holds "
        "A HINFO MX TXT RP AAAA SSHFP RRSIG CAA: HINFO held, not listed (RFC 4034 §4.1.2)")]


def test_an_nsec3_that_matches_no_name_is_a_warning(signed_text, tmp_path):
    path = rewritten(signed_text, tmp_path,
                     drop(dns.name.from_text("lone", ORIGIN), dns.rdatatype.A))
    assert findings(path) == [(line_of(path, str(hashed("lone")), "NSEC3"), "warning",
                               f"NSEC3 at {hashed('lone')} matches no name of the zone")]
