"""Signing at build time: the keys and times the core signs a zone with, and the signatures
themselves.

The core decides what is signed and how (compiler/core/dnssec/signer.c): it adds the DNSKEY,
CDS, CDNSKEY and NSEC3PARAM records and the NSEC or NSEC3 chain, and writes, for each signature
its cache does not hold, the octets it signs (RFC 4034 §3.1.8.1) and which key signs them.
They are signed here, on every processor: Ed25519 by libsodium (through PyNaCl), which signs in
about 60% of the time OpenSSL's build in `cryptography` takes, and so most of a signed build's
time; every other algorithm with dnspython's DNSSEC algorithms over `cryptography`. The
private keys never leave this process and its workers. Ed25519 (RFC 8032) and ECDSA with RFC
6979's nonces are deterministic: the same octets and key give the same signature, whichever
library makes it, so that two builds at one SOURCE_DATE_EPOCH are byte-identical. What
verifies a sample of them (compiler/dnssec/signatures.py) is `cryptography`: another
implementation than the one that signed.

The requests file, little-endian: `ZBSGN1\\0\\0`, then per request u32 key (its number among
the manifest's `key` lines), u32 length, the octets. The answer: `ZBSGD1\\0\\0`, then per
request in order u8 length and the signature.
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path
from typing import Callable

from .. import clock
from ..config import ZoneSetConfig, ZoneSource
from ..errors import UsageError
from ..toolchain import objcache

# The signing libraries and the key files' reader (keys.py, over `cryptography`) are imported
# where a zone is signed: a build that signs nothing does not pay for loading them.

REQUESTS, SIGNED = b"ZBSGN1\0\0", b"ZBSGD1\0\0"
INLINE = 1000  # fewer signatures than this are made without starting processes
CHUNK = 16384
INCEPTION_BEFORE = 3600  # seconds: for validators whose clocks run behind


def reuse_left(validity: int) -> int:
    """Seconds of its validity a cached signature must have left at a build's inception for
    the build to reuse it (the core's cache, signer.c): three quarters. A build later than
    that signs it again, so a zone rebuilt by then never serves a signature with less than
    three quarters of its validity left."""
    return validity // 4 * 3


def resign_at(expiration: int, validity: int) -> int:
    """The first build time (seconds since 1970) at which a build signs again a signature
    expiring at `expiration`, rather than reuse it from the cache: when `zonebake follow`
    and `zonebake re-sign` rebuild (the same rule as the cache's, so that the rebuild does
    move the expiration)."""
    return expiration - reuse_left(validity) + INCEPTION_BEFORE + 1


LAST_EPOCH = 253402300799  # 9999-12-31 23:59:59 UTC


def build_time() -> tuple[int, bool]:
    """The build's time, and whether it is fixed: SOURCE_DATE_EPOCH (reproducible-builds.org)
    when set, else now."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "")
    if not text:
        return clock.now(), False
    # ASCII digits only (str.isdigit takes '²', which int() does not), up to the last second
    # a date is written for (the year 9999: time.gmtime, and every tool's date formats).
    if not (text.isascii() and text.isdigit()) or int(text) > LAST_EPOCH:
        raise UsageError(f"SOURCE_DATE_EPOCH={text!r}: expected seconds since 1970, at most "
                         f"{LAST_EPOCH} (the end of the year 9999)")
    return int(text), True


def cache_path(origins: list[str]) -> Path | None:
    """The signatures a set's earlier builds made (the core's file: see signer.c)."""
    return objcache.signatures_file(origins, ".signed")


def _date(at: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def manifest_lines(zone: ZoneSource, at: int, exact: bool, key_files: list[Path]) -> list[str]:
    """The zone's `sign` line and a `key` line per DNSKEY it publishes at `at`; the key
    files of those are appended to `key_files`, in the order the core numbers them."""
    policy = zone.dnssec
    assert policy is not None
    from . import keys
    where = f"{zone.display}: dnssec"
    pairs = [p for p in keys.load(zone.origin, policy.keys) if p.published(at)]
    signing = [p for p in pairs if p.signing(at)]
    if not signing:
        raise UsageError(f"{where}: no key pair in {policy.keys} signs {zone.origin_text} at "
                         f"{_date(at)}; make one with: zonebake keygen {zone.origin_text} "
                         f"--ksk -d {policy.keys}")
    idle = {p.dnskey.algorithm for p in pairs} - {p.dnskey.algorithm for p in signing}
    if idle:
        raise UsageError(f"{where}: a key of algorithm {min(idle)} is published at "
                         f"{_date(at)} but none of that algorithm signs; RFC 4035 §2.2 wants "
                         f"every RRset signed by each algorithm of the DNSKEY RRset")
    inception = at - INCEPTION_BEFORE
    lines = [f"sign {policy.denial} {int(policy.nsec3_opt_out)} {inception} "
             f"{inception + policy.signature_validity} {int(exact)} "
             f"{reuse_left(policy.signature_validity)}"]
    for pair in pairs:
        lines.append(f"key {'sign' if pair.signing(at) else 'publish'} "
                     f"{pair.dnskey.to_wire().hex()}")
        key_files.append(pair.path)
    return lines


_keys: list = []  # a worker's signers (octets -> signature), by the core's numbers

# Known answers of the two algorithms zonebake signs with, both deterministic: RFC 8032 §7.1
# TEST 1 (Ed25519) and RFC 6979 §A.2.5 (ECDSA P-256 with SHA-256, the message "sample"). The
# core verifies only a sample of the signatures this build makes (compiler/core/dnssec/
# signatures.c): the signer is checked on these first, and each key on a signature of its own.
KNOWN_ANSWERS = {
    15: ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", b"",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e"
         "39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    13: ("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721", b"sample",
         "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716f7cb1c942d657c41d4"
         "36c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"),
}


class SignerBroken(UsageError):
    """The signing library gives a wrong signature: nothing it signs may ship."""


def _private_keys(paths: list[Path]):
    """(path, DNSKEY, private key) of each key file, the pair checked to match (keys.py)."""
    from . import keys
    for path in paths:
        _, dnskey = keys.read_public(path)
        private, _ = keys.read_private(path, dnskey)
        yield path, dnskey, private


def _known_private(algorithm: int, octets: bytes):
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    if algorithm == 15:
        return ed25519.Ed25519PrivateKey.from_private_bytes(octets)
    return ec.derive_private_key(int.from_bytes(octets, "big"), ec.SECP256R1())


def _signer(algorithm: int, private):
    """What signs with `private`: a function of the octets signed to the signature."""
    import dns.dnssecalgs
    import nacl.bindings
    if algorithm == 15:
        seed = private.private_bytes_raw()
        _, secret = nacl.bindings.crypto_sign_seed_keypair(seed)
        size = nacl.bindings.crypto_sign_BYTES
        # crypto_sign gives the signature followed by the message (RFC 8032 §5.1.6).
        return lambda data: nacl.bindings.crypto_sign(data, secret)[:size]
    made = dns.dnssecalgs.get_algorithm_cls(algorithm)(key=private)
    return lambda data: made.sign(data, verify=False, deterministic=True)


def _library(algorithm: int) -> str:
    return "libsodium" if algorithm == 15 else "cryptography"


def check_signer(key_files: list[Path]) -> None:
    """The signer's known answers for each algorithm of `key_files`, and each key's signature
    verified with its DNSKEY by `cryptography`: raises SignerBroken otherwise."""
    import dns.dnssecalgs
    checked = set()
    for path, dnskey, private in _private_keys(key_files):
        algorithm = dns.dnssecalgs.get_algorithm_cls(dnskey.algorithm)
        if dnskey.algorithm not in checked and dnskey.algorithm in KNOWN_ANSWERS:
            secret, message, expected = KNOWN_ANSWERS[dnskey.algorithm]
            known = _known_private(dnskey.algorithm, bytes.fromhex(secret))
            if _signer(dnskey.algorithm, known)(message) != bytes.fromhex(expected):
                raise SignerBroken(f"the signing library ({_library(dnskey.algorithm)}) gives "
                                   f"a wrong signature for algorithm {dnskey.algorithm}'s "
                                   "known answer: nothing is signed with it")
            checked.add(dnskey.algorithm)
        message = b"zonebake: a key checked against its DNSKEY"
        signature = _signer(dnskey.algorithm, private)(message)
        try:
            algorithm.public_cls.from_dnskey(dnskey).verify(signature, message)
        except Exception:
            raise SignerBroken(f"{path}: a signature by its private key does not verify with "
                               "its DNSKEY: nothing is signed with it") from None


def _load_keys(paths: list[Path]) -> None:
    _keys.clear()
    for _, dnskey, private in _private_keys(paths):
        _keys.append(_signer(dnskey.algorithm, private))


def _bounds(data: bytes) -> list[int]:
    """The offsets of every CHUNK-th request, and of the end."""
    if data[:8] != REQUESTS:
        raise ValueError("not a requests file")
    bounds, at, count = [8], 8, 0
    while at < len(data):
        at += 8 + struct.unpack_from("<I", data, at + 4)[0]
        count += 1
        if count % CHUNK == 0:
            bounds.append(at)
    if bounds[-1] != at:
        bounds.append(at)
    return bounds


def _sign_range(path: str, start: int, end: int) -> list[bytes]:
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    out = bytearray()
    at = 0
    while at < len(data):
        key, length = struct.unpack_from("<II", data, at)
        signature = _keys[key](data[at + 8:at + 8 + length])
        out.append(len(signature))
        out += signature
        at += 8 + length
    return [bytes(out)]


def sign(requests: Path, signed: Path, key_files: list[Path], count: int,
         along: Callable[[int], None] = lambda _: None) -> None:
    """Sign the core's `count` requests; the signatures go to `signed`. `along(n)` hears
    that n are made."""
    along(0)
    check_signer(key_files)
    data = requests.read_bytes()
    bounds = _bounds(data)
    del data
    from .. import workers  # processes: only where there are signatures to make
    parts = workers.map_chunks(_sign_range, [(str(requests), start, end)
                                             for start, end in zip(bounds, bounds[1:])],
                               count < INLINE, _load_keys, (key_files,),
                               lambda chunks: along(min(chunks * CHUNK, count)))
    with open(signed, "wb") as f:
        f.write(SIGNED)
        for part in parts:
            f.write(part)


def signed_files(config: ZoneSetConfig, target: Path) -> dict[int, Path]:
    """Where `zonebake build --write-signed TARGET` writes each zone the build signs: TARGET
    itself for one, TARGET/<origin>zone for several (TARGET then a directory)."""
    signed = [i for i, zone in enumerate(config.zones) if zone.dnssec is not None]
    if not signed:
        raise UsageError(f"--write-signed {target}: no zone has a dnssec table")
    if len(signed) == 1 and not target.is_dir():
        return {signed[0]: target}
    if target.exists() and not target.is_dir():
        raise UsageError(f"--write-signed {target}: {len(signed)} zones are signed: give a "
                         f"directory")
    names = {i: config.zones[i].origin_text for i in signed}
    return {i: target / (f"{name}zone" if name != "." else "root.zone")
            for i, name in names.items()}
