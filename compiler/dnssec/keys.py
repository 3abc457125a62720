"""DNSSEC key pairs in BIND's file format: `zonebake keygen` writes them, the build's signer
reads them (and those BIND's dnssec-keygen writes), `zonebake ds` prints the DS records the
parent publishes.

A pair is two files named K<origin>+<algorithm>+<key tag>, as BIND names them: `.key` holds
the DNSKEY record as a zone-file line, `.private` BIND's "Private-key-format: v1.3" with the
private key in base64 (for Ed25519 the 32-octet seed, RFC 8080 §3; for ECDSA P-256 the
32-octet scalar, RFC 6605 §4). The `.private` file is written readable by its owner only.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
import calendar
from dataclasses import dataclass, field
from pathlib import Path

import dns.dnssec
import dns.exception
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from .. import paths
from ..errors import UsageError
from .algorithms import ALGORITHMS, MNEMONICS

ZONE_KEY, SEP = 0x0100, 0x0001  # DNSKEY flags (RFC 4034 §2.1.1)
MAX_TIME = 2 ** 63
TIMES = ("Publish", "Activate", "Inactive", "Delete")


@dataclass(frozen=True)
class KeyPair:
    origin: dns.name.Name
    dnskey: dns.rdata.Rdata
    private: object  # a `cryptography` private key
    path: Path  # the .key file
    # BIND's timing metadata (dnssec-keygen -P -A -I -D, dnssec-settime), seconds since 1970:
    # when the key enters the DNSKEY RRset, starts and stops signing, leaves the RRset.
    timing: dict[str, int] = field(default_factory=dict)

    def published(self, at: int) -> bool:
        return (self.timing.get("Publish", 0) <= at
                and at < self.timing.get("Delete", MAX_TIME))

    def signing(self, at: int) -> bool:
        """Whether it signs at `at` (a key with no Activate time signs while published)."""
        return (self.published(at) and self.timing.get("Activate", 0) <= at
                and at < self.timing.get("Inactive", MAX_TIME))

    @property
    def tag(self) -> int:
        return dns.dnssec.key_id(self.dnskey)

    @property
    def ksk(self) -> bool:
        return bool(self.dnskey.flags & SEP)


def base_name(origin: dns.name.Name, algorithm: int, tag: int) -> str:
    return f"K{origin.to_text()}+{algorithm:03d}+{tag:05d}"


def _stamp(at: float) -> str:
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(at))


def generate(origin: dns.name.Name, algorithm: str, ksk: bool, directory: Path,
             now: float | None = None) -> KeyPair:
    """A new key pair for `origin`, written into `directory`; never overwrites a file."""
    found = paths.status(directory)
    if not paths.is_dir(found):
        raise UsageError(f"{directory}: no such directory{paths.reason(found)}")
    number = ALGORITHMS[algorithm]
    private = (ed25519.Ed25519PrivateKey.generate() if number == 15
               else ec.generate_private_key(ec.SECP256R1()))
    dnskey = dns.dnssec.make_dnskey(private.public_key(), number,
                                    flags=ZONE_KEY | (SEP if ksk else 0))
    now = time.time() if now is None else now
    pair = KeyPair(origin, dnskey, private, directory / (base_name(
        origin, number, dns.dnssec.key_id(dnskey)) + ".key"))
    kind = "key-signing" if ksk else "zone-signing"
    public_text = (f"; This is a {kind} key, keyid {pair.tag}, for {origin.to_text()}\n"
                   f"; Created: {_stamp(now)}\n"
                   f"{origin.to_text()} IN DNSKEY {dnskey.to_text()}\n")
    private_text = (f"Private-key-format: v1.3\n"
                    f"Algorithm: {number} ({MNEMONICS[number]})\n"
                    f"PrivateKey: {base64.b64encode(_private_octets(private)).decode()}\n"
                    # No Publish or Activate time: the key is in use from the first build
                    # that finds it, whatever SOURCE_DATE_EPOCH says (a rollover sets them,
                    # with dnssec-settime or by hand: docs/dnssec.rst, the rollovers).
                    f"Created: {_stamp(now)}\n")
    _write_new(pair.path.with_suffix(".private"), private_text, 0o600)
    _write_new(pair.path, public_text, 0o644)
    return pair


def _write_new(path: Path, text: str, mode: int) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise UsageError(f"{path}: exists; not overwritten") from None
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from None
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _private_octets(private) -> bytes:
    if isinstance(private, ed25519.Ed25519PrivateKey):
        return private.private_bytes(serialization.Encoding.Raw,
                                     serialization.PrivateFormat.Raw,
                                     serialization.NoEncryption())
    return private.private_numbers().private_value.to_bytes(32, "big")


def load(origin: dns.name.Name, directory: Path) -> list[KeyPair]:
    """Every key pair for `origin` in `directory`, by key tag; each private key checked
    against its public one."""
    found = paths.status(directory)
    if not paths.is_dir(found):
        raise UsageError(f"{directory}: not a directory of keys{paths.reason(found)}")
    pairs = []
    for path in sorted(directory.glob("K*.key")):
        owner, dnskey = read_public(path)
        if owner == origin:
            private, timing = read_private(path, dnskey)
            pairs.append(KeyPair(origin, dnskey, private, path, timing))
    return sorted(pairs, key=lambda p: (p.tag, p.dnskey.algorithm))


def read_public(path: Path) -> tuple[dns.name.Name, dns.rdata.Rdata]:
    """The DNSKEY record of a .key file: comment lines, then OWNER [TTL] [IN] DNSKEY RDATA."""
    try:
        lines = [line.split(";", 1)[0].strip() for line in path.read_text().splitlines()]
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    records = [line for line in lines if line]
    tokens = records[0].split() if len(records) == 1 else []
    upper = [t.upper() for t in tokens]
    if "DNSKEY" not in upper[1:4]:
        raise UsageError(f"{path}: not a DNSKEY record, as dnssec-keygen writes one")
    at = upper.index("DNSKEY")
    try:
        owner = dns.name.from_text(tokens[0])
        dnskey = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.DNSKEY,
                                     " ".join(tokens[at + 1:]))
    except dns.exception.DNSException as exc:
        raise UsageError(f"{path}: {exc}") from None
    if dnskey.algorithm not in MNEMONICS:
        raise UsageError(f"{path}: algorithm {dnskey.algorithm} is not one zonebake signs "
                         f"with (Ed25519 15, ECDSAP256SHA256 13)")
    if not dnskey.flags & ZONE_KEY:
        raise UsageError(f"{path}: not a zone key (flags {dnskey.flags})")
    return owner, dnskey


def read_private(key_path: Path, dnskey: dns.rdata.Rdata) -> tuple[object, dict[str, int]]:
    path = key_path.with_suffix(".private")
    try:
        fields = dict(line.split(":", 1) for line in path.read_text().splitlines()
                      if ":" in line)
    except FileNotFoundError:
        raise UsageError(f"{path}: missing (the private half of {key_path.name})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    algorithm = fields.get("Algorithm", "").split(" ", 1)[0]
    if algorithm != str(dnskey.algorithm):
        raise UsageError(f"{path}: algorithm {algorithm or '(none)'} where {key_path.name} "
                         f"says {dnskey.algorithm}")
    try:
        octets = base64.b64decode(fields.get("PrivateKey", ""), validate=True)
    except binascii.Error:
        octets = b""
    # Ed25519's private key is its 32-octet seed (RFC 8080 §3); BIND writes an ECDSA one as
    # a big-endian number without its leading zero octets (one key in 256 has 31).
    if len(octets) != 32 and not (dnskey.algorithm == 13 and 0 < len(octets) < 32):
        raise UsageError(f"{path}: no 32-octet PrivateKey in base64")
    private = (ed25519.Ed25519PrivateKey.from_private_bytes(octets) if dnskey.algorithm == 15
               else _ecdsa_private(path, octets))
    if dns.dnssec.make_dnskey(private.public_key(), dnskey.algorithm,
                              flags=dnskey.flags).key != dnskey.key:
        raise UsageError(f"{path}: its private key is not the one of {key_path.name}")
    return private, _timing(path, fields)


def _timing(path: Path, fields: dict[str, str]) -> dict[str, int]:
    """BIND's timing fields, YYYYMMDDHHMMSS in UTC; 0 (dnssec-settime's "none") is unset."""
    timing = {}
    for name in TIMES:
        text = fields.get(name, "0")
        if text == "0":
            continue
        try:
            timing[name] = calendar.timegm(time.strptime(text, "%Y%m%d%H%M%S"))
        except ValueError:
            raise UsageError(f"{path}: {name}: {text!r} is not a time as YYYYMMDDHHMMSS") \
                from None
    return timing


def _ecdsa_private(path: Path, octets: bytes):
    try:
        return ec.derive_private_key(int.from_bytes(octets, "big"), ec.SECP256R1())
    except ValueError:
        raise UsageError(f"{path}: not a P-256 private key") from None


def ds_records(origin: dns.name.Name, pairs: list[KeyPair]) -> list[str]:
    """The DS records (SHA-256, RFC 4509) for the parent: of the key-signing keys, or of every
    key when there is none (each then signs the DNSKEY RRset, a combined signing key)."""
    chosen = [p for p in pairs if p.ksk] or pairs
    lines = []
    for pair in chosen:
        ds = dns.dnssec.make_ds(origin, pair.dnskey, "SHA256")
        lines.append(f"{origin.to_text()} IN DS {ds.key_tag} {ds.algorithm} {ds.digest_type} "
                     f"{ds.digest.hex().upper()}")
    return lines
