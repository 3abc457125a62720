"""NSEC3's hash of a name (runtime/nsec3hash.h, RFC 5155 §5), which the responder computes for
a name that has no node and the core for every owner: SHA-1 as Python's hashlib computes it,
for inputs of every length across the block boundaries, and the hashes of RFC 5155's
Appendix A example zone (salt aabbccdd, 12 iterations). Each with the portable block and
with the SHA extensions' where the processor has them."""

from __future__ import annotations

import base64
import hashlib
import random
import subprocess

import dns.name
import pytest

from conftest import ROOT, TESTS

CFLAGS = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'runtime'}"]

# RFC 5155 Appendix A: H(name) for names of its example zone, in base32hex.
APPENDIX_A = {
    "example.": "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom",
    "a.example.": "35mthgpgcu1qg68fab165klnsnk3dpvl",
    "ai.example.": "gjeqe526plbf1g8mklp59enfd789njgi",
    "ns1.example.": "2t7b4g4vsa5smi47k61mv5bv1a22bojr",
}


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    path = tmp_path_factory.mktemp("nsec3") / "nsec3_hashes"
    subprocess.run(["cc", *CFLAGS, str(TESTS / "c" / "nsec3_hashes.c"), "-o", str(path)],
                   check=True)
    return path


@pytest.fixture(scope="module", params=["portable", "sha-ni"])
def hashes(request, binary):
    block = request.param
    if block == "sha-ni":
        which = subprocess.run([str(binary), "--which"], capture_output=True, text=True,
                               check=True).stdout.strip()
        if which != "sha-ni":
            pytest.skip("this processor has no SHA extensions: only the portable block runs")

    def run(inputs: list[tuple[bytes, bytes, int]]) -> list[bytes]:
        text = "".join(f"{n.hex() or '-'} {s.hex() or '-'} {i}\n" for n, s, i in inputs)
        flags = ["--portable"] if block == "portable" else []
        out = subprocess.run([str(binary), *flags], input=text, capture_output=True,
                             text=True, check=True, timeout=60).stdout
        return [bytes.fromhex(line) for line in out.split()]
    return run


def nsec3_hash(name: bytes, salt: bytes, iterations: int) -> bytes:
    digest = hashlib.sha1(name + salt).digest()
    for _ in range(iterations):
        digest = hashlib.sha1(digest + salt).digest()
    return digest


def test_sha1_of_every_length_is_hashlibs(hashes):
    """Lengths 0 to 510 (a name and a salt at their longest): the padding falls in the last
    block or spills into one more at 56 octets and every 64 after."""
    rng = random.Random(5155)
    inputs = []
    for length in range(0, 511):
        split = rng.randint(0, min(length, 255))
        data = rng.randbytes(length)
        inputs.append((data[:length - split], data[length - split:], 0))
    for (name, salt, _), got in zip(inputs, hashes(inputs), strict=True):
        assert got == hashlib.sha1(name + salt).digest(), (len(name), len(salt))


def test_iterations_hash_the_digest_and_the_salt_again(hashes):
    inputs = [(b"\x07example\x00", bytes.fromhex("aabbccdd"), i) for i in (0, 1, 12, 100)]
    inputs.append((b"\x03www\x07example\x00", b"", 5))
    for (name, salt, iterations), got in zip(inputs, hashes(inputs), strict=True):
        assert got == nsec3_hash(name, salt, iterations)


def test_rfc5155_appendix_a(hashes):
    names = list(APPENDIX_A)
    inputs = [(dns.name.from_text(n).to_wire(), bytes.fromhex("aabbccdd"), 12) for n in names]
    for name, got in zip(names, hashes(inputs), strict=True):
        assert base64.b32hexencode(got).decode().lower() == APPENDIX_A[name]
