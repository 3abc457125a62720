"""Every signature of a signed zone verified before anything ships (RFC 4035 §5.3.3), as Knot's
`dnssec-validation` checks a zone as it loads, but in CI.

The core checks what needs no cryptography (compiler/core/dnssec/signatures.c: the signer, the
key, the times, every RRset signed by each algorithm) and writes each signature it has not
verified in an earlier build, with the octets it signs and the DNSKEYs it may be by. They are
verified here with dnspython's DNSSEC algorithms over the `cryptography` package, on every
processor, while the core goes on making the answers. When all verify, this build's digests
become the cache, so that a rebuild verifies only the signatures that changed.

A signature by a key the apex does not hold never comes here: nothing could verify it (the
core's error, or under --lenient its warning, says so). One that fails against a key the apex
holds is an error, --lenient or not: the zone would be bogus at every validator.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import Diagnostic, Position
from ..toolchain import objcache

MAGIC = b"ZBSIG1\0\0"
SHOWN = 10  # failures shown per zone, then a count
INLINE = 2000  # fewer signatures than this are verified without starting processes
CHUNK = 8192
# RFC 8624 §3.1: RSAMD5, DSA, DSA-NSEC3-SHA1 and ECC-GOST MUST NOT be used for validation.
FORBIDDEN = {1: "RSAMD5", 3: "DSA", 6: "DSA-NSEC3-SHA1", 12: "ECC-GOST"}

Keys = dict[tuple[int, int, int], list[bytes]]  # (zone, key tag, algorithm): DNSKEY RDATAs


@dataclass
class Contents:
    files: list[str] = field(default_factory=list)
    keys: Keys = field(default_factory=dict)
    bounds: list[int] = field(default_factory=list)  # ranges of entries for one process each


def cache_path(origins: list[str]) -> Path | None:
    """The cache of a zone set: a file of sorted SHA-256 digests, one per verified signature."""
    return objcache.signatures_file(origins, ".digests")


@dataclass(frozen=True)
class Signature:
    zone: int
    file: int
    line: int
    tag: int
    algorithm: int
    label: str  # `OWNER RRSIG TYPE`
    signature: bytes
    signed: bytes  # what it signs


def _signature_at(data: bytes, at: int) -> tuple[Signature, int]:
    """The 'S' entry at `at`, and the offset after it."""
    zone, file, line, tag, algorithm, label_len = struct.unpack_from("<xIIIHBH", data, at)
    at += 18
    label = data[at:at + label_len].decode(errors="replace")
    at += label_len
    sig_len, = struct.unpack_from("<H", data, at)
    signature = data[at + 2:at + 2 + sig_len]
    at += 2 + sig_len
    data_len, = struct.unpack_from("<I", data, at)
    end = at + 4 + data_len
    return Signature(zone, file, line, tag, algorithm, label, signature, data[at + 4:end]), end


def _skip(data: bytes, at: int) -> int:
    """The offset after the entry at `at`."""
    kind = data[at]
    if kind == ord("F"):
        return at + 3 + struct.unpack_from("<H", data, at + 1)[0]
    if kind == ord("K"):
        return at + 10 + struct.unpack_from("<H", data, at + 8)[0]
    if kind != ord("S"):
        raise ValueError(f"an entry of unknown kind {kind}")
    return _signature_at(data, at)[1]


def _scan(data: bytes) -> Contents:
    """The files and keys of the file, and the offsets of every CHUNK-th signature."""
    if data[:8] != MAGIC:
        raise ValueError("not a signatures file")
    contents = Contents(bounds=[8])
    at, count = 8, 0
    while at < len(data):
        end = _skip(data, at)
        if data[at] == ord("F"):
            contents.files.append(data[at + 3:end].decode(errors="replace"))
        elif data[at] == ord("K"):
            zone, tag, algorithm = struct.unpack_from("<IHB", data, at + 1)
            contents.keys.setdefault((zone, tag, algorithm), []).append(data[at + 10:end])
        else:
            count += 1
            if count % CHUNK == 0:
                contents.bounds.append(end)
        at = end
    if contents.bounds[-1] != at:
        contents.bounds.append(at)
    return contents


def _public_key(algorithm: int, rdata: bytes):
    import dns.dnssecalgs
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype
    dnskey = dns.rdata.from_wire(dns.rdataclass.IN, dns.rdatatype.DNSKEY, rdata, 0, len(rdata))
    return dns.dnssecalgs.get_algorithm_cls(algorithm).public_cls.from_dnskey(dnskey)


Failure = tuple[int, int, int, str]  # zone, file, line, message


def _verify_range(path: str, keys: Keys, start: int, end: int) -> list[Failure]:
    """Verify the signatures between two entry offsets of the file."""
    from cryptography.exceptions import InvalidSignature
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    public: dict[bytes, object] = {}
    failures: list[Failure] = []
    at = 0
    while at < len(data):
        if data[at] != ord("S"):
            at = _skip(data, at)
            continue
        sig, at = _signature_at(data, at)
        zone, file, line, tag, algorithm = sig.zone, sig.file, sig.line, sig.tag, sig.algorithm
        what = f"{sig.label} (key {tag}, algorithm {algorithm})"
        if algorithm in FORBIDDEN:
            failures.append((zone, file, line, f"{what}: {FORBIDDEN[algorithm]} signatures are "
                             "not verified (RFC 8624 §3.1); sign with ECDSAP256SHA256 or "
                             "ED25519"))
            continue
        problem = "the signature does not verify (RFC 4035 §5.3.3)"
        for rdata in keys.get((zone, tag, algorithm), ()):
            try:
                if rdata not in public:
                    public[rdata] = _public_key(algorithm, rdata)
                public[rdata].verify(sig.signature, sig.signed)
                break
            except InvalidSignature:
                continue
            except Exception as exc:  # dnspython's and cryptography's for a key they refuse
                problem = f"its DNSKEY cannot be used: {exc}"
        else:
            failures.append((zone, file, line, f"{what}: {problem}"))
    return failures


def verify(path: Path, count: int,
           along: Callable[[int], None] = lambda _: None) -> dict[int, list[Diagnostic]]:
    """The errors of the signatures the core wrote to `path` (`count` of them), by the zone's
    number in the manifest. `along(n)` hears that n are verified."""
    along(0)
    contents = _scan(path.read_bytes())
    from .. import workers  # processes: only for a set with signatures to verify
    failures = workers.map_chunks(_verify_range, [
        (str(path), contents.keys, start, end)
        for start, end in zip(contents.bounds, contents.bounds[1:])], count < INLINE,
        done=lambda chunks: along(min(chunks * CHUNK, count)))
    return _diagnostics(failures, contents.files)


def _diagnostics(failures: list[Failure], files: list[str]) -> dict[int, list[Diagnostic]]:
    by_zone: dict[int, list[Diagnostic]] = {}
    for zone, file, line, message in failures:
        by_zone.setdefault(zone, []).append(Diagnostic(Position(files[file], line), "error",
                                                       message))
    for zone, found in by_zone.items():
        found.sort(key=lambda d: d.position)
        if len(found) > SHOWN:
            found[SHOWN:] = [Diagnostic(found[SHOWN].position, "error",
                                        f"{len(found) - SHOWN} more signatures do not verify")]
    return by_zone

