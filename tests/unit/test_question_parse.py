"""The question parser (runtime/wire.h): RFC 4343 lowercasing of ASCII letters only, the name's
hash the perfect hash's (runtime/hash.h), malformed questions refused; and its SSE2 block
lowercasing (x86-64) gives what the portable word-at-a-time one gives (-DZB_NO_SIMD), which
builds for other processors use."""

from __future__ import annotations

import random
import struct
import subprocess

import pytest

from conftest import ROOT, TESTS

CFLAGS = ["-std=gnu11", "-O2", "-Wall", "-Werror", f"-I{ROOT / 'runtime'}"]
HASH_OF = TESTS / "c" / "hash_vectors.c"


@pytest.fixture(scope="module")
def parsers(tmp_path_factory) -> dict[str, str]:
    work = tmp_path_factory.mktemp("question")
    built = {}
    for variant, flags in (("sse2", []), ("portable", ["-DZB_NO_SIMD"])):
        binary = work / f"question_{variant}"
        subprocess.run(["cc", *CFLAGS, *flags, str(TESTS / "c" / "question_parse.c"), "-o",
                        str(binary)], check=True)
        built[variant] = str(binary)
    hashes = work / "hash_vectors"
    subprocess.run(["cc", *CFLAGS, str(HASH_OF), "-o", str(hashes)], check=True)
    built["hash"] = str(hashes)
    return built


def run(binary: str, packets: list[bytes]) -> list[str]:
    out = subprocess.run([binary], input="".join(p.hex() + "\n" for p in packets),
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def packet(labels: list[bytes], tail: bytes = struct.pack("!HH", 1, 1)) -> bytes:
    name = b"".join(bytes([len(label)]) + label for label in labels) + b"\0"
    return bytes(12) + name + tail


def lowered(data: bytes) -> bytes:
    return bytes(b + 32 if 0x41 <= b <= 0x5A else b for b in data)


def random_names(rng: random.Random, count: int) -> list[list[bytes]]:
    """Names of every length up to 255 octets, with octets of every value: letters of both
    cases, the octets either side of them ('@', '[', '`', '{'), and binary ones."""
    names = []
    alphabet = list(range(256))
    for _ in range(count):
        labels, room = [], rng.randrange(0, 255)
        while room > 1:
            size = rng.randrange(1, min(63, room - 1) + 1)
            labels.append(bytes(rng.choice(alphabet) for _ in range(size)))
            room -= size + 1
        names.append(labels)
    return names


def test_portable_and_sse2_agree_and_lowercase_ascii_letters_only(parsers):
    rng = random.Random(4343)
    names = random_names(rng, 3000) + [[b"WwW", b"ExAmPlE"], [b"@[`{AZaz"], []]
    packets = [packet(labels) for labels in names]
    sse2, portable = run(parsers["sse2"], packets), run(parsers["portable"], packets)
    assert sse2 == portable
    for labels, line in zip(names, sse2):
        wire = b"".join(bytes([len(label)]) + label for label in labels) + b"\0"
        fields = line.split()
        assert fields[0] == str(len(wire)) and fields[1] == str(len(labels))
        assert fields[2:5] == ["1", "1", str(12 + len(wire) + 4)]
        assert bytes.fromhex(fields[6]) == lowered(wire)


def test_the_hash_is_the_lowercased_names(parsers):
    names = [[b"WWW", b"Example"], [b"a" * 63] * 3, [b"Host12345", b"bench", b"example"]]
    lines = run(parsers["sse2"], [packet(labels) for labels in names])
    stdin = "".join(f"7 1 1 0 {bytes.fromhex(line.split()[6]).hex()}\n" for line in lines)
    hashes = subprocess.run([parsers["hash"]], input=stdin, capture_output=True, text=True,
                            check=True).stdout.split("\n")
    assert [line.split()[5] for line in lines] == [h.split()[0] for h in hashes[:len(lines)]]


@pytest.mark.parametrize("bad", [
    bytes(12),                                     # no question
    bytes(12) + b"\x03www\x00" + b"\x00\x01\x00",  # QCLASS cut short
    bytes(12) + b"\x03ww",                         # label past the end
    bytes(12) + b"\xc0\x0c\x00\x01\x00\x01",       # a compression pointer
    bytes(12) + b"\x40" + bytes(64) + b"\x00\x00\x01\x00\x01",  # extended label type
    bytes(12) + (b"\x3f" + bytes(63)) * 4 + b"\x00\x00\x01\x00\x01",  # 257 octets
])
def test_malformed_questions_are_refused(parsers, bad):
    assert run(parsers["sse2"], [bad]) == ["-1"]
    assert run(parsers["portable"], [bad]) == ["-1"]
