"""What checks the signatures a build makes (compiler/core/dnssec/signatures.c, made_here;
compiler/dnssec/signing.py, check_signer): each is matched to its signing (the octets the
zone serves are those signed, the signature the one made), each zone's first 64 and one in
256 of the rest are verified besides, and the signer passes known answers first. A signer
that goes wrong fails the build."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from buildsigned import EPOCH, ZONE, signed_set

from zonebake.dnssec import signing

HOSTS = 400

# The CLI with progress from the first second, and (with a `sabotage` argument) a signer that
# signs one octet more than it is asked to: valid signatures, of the wrong octets.
LAUNCHER = """import sys
import zonebake.progress
zonebake.progress.QUIET_FOR = 0
if sys.argv[1] == "sabotage":
    import struct
    from zonebake.dnssec import signing
    def wrong(path, start, end):
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read(end - start)
        out, at = bytearray(), 0
        while at < len(data):
            key, length = struct.unpack_from("<II", data, at)
            made = signing._keys[key](data[at + 8:at + 8 + length] + b"x")
            out += bytes([len(made)]) + made
            at += 8 + length
        return [bytes(out)]
    signing._sign_range = wrong
from zonebake.cli import main
sys.argv = ["zonebake", *sys.argv[2:]]
sys.exit(main())
"""


def build(toml: Path, out: Path, cache: Path, how: str = "plain") -> subprocess.CompletedProcess:
    env = {"SOURCE_DATE_EPOCH": str(EPOCH), "XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", LAUNCHER, how, "build", "-c", str(toml), "-o",
                           str(out)], capture_output=True, text=True, env=env)


def counted(stderr: str, what: str) -> int:
    found = re.findall(rf"core: {what}: (\d+) signatures", stderr)
    return int(found[-1]) if found else 0


@pytest.fixture
def zone_set(tmp_path: Path) -> Path:
    hosts = "".join(f"h{k} A 192.0.2.{k % 250 + 1}\n" for k in range(HOSTS))
    return signed_set(tmp_path, zone=ZONE + hosts)


def test_fresh_signatures_are_matched_and_a_sample_verified(zone_set, tmp_path):
    made = build(zone_set, tmp_path / "out", tmp_path / "cache")
    assert made.returncode == 0, made.stderr
    total = counted(made.stderr, "signatures")
    matched = counted(made.stderr, "signatures matched to their signing")
    verified = counted(made.stderr, "verify")
    assert total > 2 * HOSTS
    assert matched + verified == total
    # The first 64 and about one in 256 of the rest: 64 + ~3 of ~850.
    assert 64 <= verified <= 64 + total // 32
    # Progress along the way (from the first second here: LAUNCHER).
    assert re.search(rf"zonebake: core: signing: {total}/{total} signatures, \d+/s\n",
                     made.stderr), made.stderr
    again = build(zone_set, tmp_path / "again", tmp_path / "cache")
    assert again.returncode == 0, again.stderr
    # Rebuilt: the signatures come from the signing cache, and were checked by the first
    # build (its verified digests): none is verified or matched again.
    assert counted(again.stderr, "verify") == 0
    assert counted(again.stderr, "signatures matched to their signing") == 0
    assert (tmp_path / "again" / "zonebake-server").read_bytes() == \
        (tmp_path / "out" / "zonebake-server").read_bytes()


def test_a_signer_of_the_wrong_octets_fails_the_build(zone_set, tmp_path):
    made = build(zone_set, tmp_path / "out", tmp_path / "cache", "sabotage")
    assert made.returncode == 1, made.stderr
    assert "the signature does not verify (RFC 4035 §5.3.3)" in made.stderr
    assert not (tmp_path / "out").exists()


def test_a_wrong_known_answer_stops_the_signer(zone_set, tmp_path, monkeypatch):
    keys = sorted((tmp_path / "keys").glob("*.key"))
    signing.check_signer(keys)  # the library gives the known answers
    secret, message, expected = signing.KNOWN_ANSWERS[15]
    monkeypatch.setitem(signing.KNOWN_ANSWERS, 15, (secret, message, "00" * 64))
    with pytest.raises(signing.SignerBroken, match="known answer"):
        signing.check_signer(keys)


def test_libsodium_signs_as_cryptography_does():
    """Ed25519 is signed by libsodium and checked by `cryptography`: being deterministic
    (RFC 8032 §5.1.6), both give the same octets for any key and message, the empty one and
    one longer than a hash block included."""
    from cryptography.hazmat.primitives.asymmetric import ed25519
    for k in range(20):
        private = ed25519.Ed25519PrivateKey.generate()
        sign = signing._signer(15, private)
        for message in (b"", bytes(range(k)), bytes(k % 256 for k in range(300 + k * 37))):
            assert sign(message) == private.sign(message)
