"""NSEC3's hash of a name (runtime/query/nsec3hash.h, RFC 5155 §5), which the responder computes
for a name that has no node and the core for every owner: SHA-1 as Python's hashlib computes it,
for inputs of every length across the block boundaries, and the hashes of RFC 5155's
Appendix A example zone (salt aabbccdd, 12 iterations). Each with the portable block, with
the SHA extensions' where the processor has them, and with the inputs of one block hashed
four at a time in SSE2's lanes and eight at a time in AVX2's (where the processor has it),
as a UDP batch's names are."""

from __future__ import annotations

import base64
import hashlib
import random
import subprocess

import dns.name
import pytest

from conftest import c_harness


# RFC 5155 Appendix A: H(name) for names of its example zone, in base32hex.
APPENDIX_A = {
    "example.": "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom",
    "a.example.": "35mthgpgcu1qg68fab165klnsnk3dpvl",
    "ai.example.": "gjeqe526plbf1g8mklp59enfd789njgi",
    "ns1.example.": "2t7b4g4vsa5smi47k61mv5bv1a22bojr",
}


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return c_harness(tmp_path_factory, "nsec3_hashes")


FLAGS = {"portable": ["--portable"], "sha-ni": [], "4 lanes": ["--lanes", "4"],
         "8 lanes": ["--lanes", "8"]}


@pytest.fixture(scope="module", params=list(FLAGS))
def hashes(request, binary):
    block = request.param
    which = subprocess.run([str(binary), "--which"], capture_output=True, text=True,
                           check=True).stdout.split()
    if block == "sha-ni" and "sha-ni" not in which:
        pytest.skip("this processor has no SHA extensions: only the portable block runs")
    if block == "8 lanes" and "avx2" not in which:
        pytest.skip("this processor has no AVX2: no eight lanes")

    def run(inputs: list[tuple[bytes, bytes, int]]) -> list[bytes]:
        text = "".join(f"{n.hex() or '-'} {s.hex() or '-'} {i}\n" for n, s, i in inputs)
        flags = FLAGS[block]
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


def test_names_of_one_block_in_lanes_each_get_their_own(hashes):
    """Names and salts of every length that fits one block (0 to 55 octets), each unlike the
    others, in an order that puts every length in every lane; some iterated."""
    rng = random.Random(9276)
    inputs = []
    for length in [*range(56), *range(55, -1, -1), *rng.sample(range(56), 56)]:
        split = rng.randint(0, length)
        data = rng.randbytes(length)
        inputs.append((data[:split], data[split:], rng.choice((0, 0, 0, 1, 7))))
    for (name, salt, iterations), got in zip(inputs, hashes(inputs), strict=True):
        assert got == nsec3_hash(name, salt, iterations), (len(name), len(salt), iterations)


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
