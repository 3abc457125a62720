"""A pre-signed zone in the state of PowerDNS's regression zone cryptokeys.org (issue 37), made
here with dnssec-keygen and dnssec-signzone (bind9-utils): the apex DNSKEY set holds an
RSASHA512 key (algorithm 10) that signs nothing and an Ed25519 key that signs everything, and
an ECDSAP384SHA384 key (algorithm 14) that is not published signs everything too. NSD, Knot and
BIND serve it; a validator accepts it through the Ed25519 signatures (RFC 6840 §5.11) and
skips those by the key it does not have (RFC 4035 §5.3.1).

dnssec-signzone signs with the two keys named on its command line; the RSASHA512 key's record
is in the zone file, its private key elsewhere, so nothing signs with it. `-O full`: a record
a line, so that a test finds each one's line and edits it in place."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dns.rdataclass
import dns.rdatatype
import dns.rrset

from conftest import require

ORIGIN = "cryptokeys.org."
ZONE = f"""$ORIGIN {ORIGIN}
$TTL 3600
@ SOA ns1 hostmaster 1 3600 900 604800 300
@ NS ns1
ns1 A 192.0.2.1
www A 192.0.2.2
www TXT "served as the file has it"
"""
# Each RRset the zone signs.
RRSETS = [(ORIGIN, "SOA"), (ORIGIN, "NS"), (ORIGIN, "NSEC"), (ORIGIN, "DNSKEY"),
          (f"www.{ORIGIN}", "A"), (f"www.{ORIGIN}", "TXT"), (f"www.{ORIGIN}", "NSEC"),
          (f"ns1.{ORIGIN}", "A"), (f"ns1.{ORIGIN}", "NSEC")]
UNUSED, SIGNING, UNPUBLISHED = 10, 15, 14  # the keys' algorithms


@dataclass(frozen=True)
class SignedZone:
    path: Path
    tags: dict[int, int]  # key tag by algorithm
    ksk: dns.rrset.RRset  # the Ed25519 key's DNSKEY, the trust anchor

    def line(self, owner: str, rdtype: str, covers: str = "", algorithm: int = 0) -> int:
        """The line of the first record of `owner` and `rdtype` (an RRSIG: of the type it
        covers, and by `algorithm` when given)."""
        for number, text in enumerate(self.path.read_text().splitlines(), 1):
            fields = text.split()
            if fields[:1] != [owner] or len(fields) < 5 or fields[3] != rdtype:
                continue
            if rdtype != "RRSIG" or (fields[4] == covers and
                                     algorithm in (0, int(fields[5]))):
                return number
        raise AssertionError(f"no {owner} {rdtype} {covers} in {self.path}")

    def edited(self, out: Path, owner: str, covers: str, algorithm: int,
               change: Callable[[list[str]], list[str] | None]) -> Path:
        """The zone with the RRSIG of `owner` `covers` by `algorithm` changed, written to
        `out`: `change` has its fields (owner, TTL, class, RRSIG, then the RDATA's: SIGNER and
        SIGNATURE index them) and returns them changed, or None to leave its line empty (every
        other line stays where it was)."""
        lines = self.path.read_text().splitlines(keepends=True)
        at = self.line(owner, "RRSIG", covers, algorithm) - 1
        fields = change(lines[at].split())
        lines[at] = " ".join(fields) + "\n" if fields is not None else "\n"
        out.write_text("".join(lines))
        return out


SIGNER, SIGNATURE = 11, 12  # an RRSIG line's fields; the signature's base64 may go on


def forged(fields: list[str]) -> list[str]:
    """The signature's first character changed."""
    first = fields[SIGNATURE]
    return fields[:SIGNATURE] + [("B" if first[0] != "B" else "C") + first[1:]] + \
        fields[SIGNATURE + 1:]


def sign(directory: Path) -> SignedZone:
    keygen, signzone = require("bind9-utils", "dnssec-keygen", "dnssec-signzone")
    directory.mkdir(parents=True, exist_ok=True)
    unused = directory / "unused"
    unused.mkdir(exist_ok=True)

    def key(where: Path, *how: str) -> str:
        return subprocess.run([keygen, "-q", *how, "-K", str(where), ORIGIN],
                              capture_output=True, text=True, check=True).stdout.strip()

    names = {UNUSED: key(unused, "-a", "RSASHA512", "-b", "2048"),
             SIGNING: key(directory, "-a", "ED25519", "-f", "KSK"),
             UNPUBLISHED: key(directory, "-a", "ECDSAP384SHA384")}
    unsigned = directory / "unsigned.zone"
    unsigned.write_text(ZONE + (unused / f"{names[UNUSED]}.key").read_text()
                        + (directory / f"{names[SIGNING]}.key").read_text())
    signed = directory / f"{ORIGIN}zone"
    subprocess.run([signzone, "-q", "-O", "full", "-z", "-K", str(directory), "-o", ORIGIN,
                    "-f", str(signed), str(unsigned), names[SIGNING], names[UNPUBLISHED]],
                   check=True, cwd=directory, capture_output=True)
    ksk_text = (directory / f"{names[SIGNING]}.key").read_text().splitlines()[-1]
    ksk = dns.rrset.from_text(ORIGIN, 3600, dns.rdataclass.IN, dns.rdatatype.DNSKEY,
                              ksk_text.split("DNSKEY", 1)[1])
    tags = {algorithm: int(name.rsplit("+", 1)[1]) for algorithm, name in names.items()}
    return SignedZone(signed, tags, ksk)


def trust_anchor(ksk: dns.rrset.RRset, path: Path) -> Path:
    """A delv trust-anchors file of the key."""
    [key] = ksk
    path.write_text(f'trust-anchors {{\n {ORIGIN} static-key {key.flags} {key.protocol} '
                    f'{key.algorithm} "{base64.b64encode(key.key).decode()}";\n}};\n')
    return path
