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


OPT_TAIL = b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0)  # an OPT record without options


def guess_packets(rng: random.Random) -> list[bytes]:
    """Plain queries and queries with an OPT record, their names well formed or not: random
    octets ending in a 0, letters where label lengths go, a name shorter than the guess with
    octets after it, an OPT record with an option."""
    packets = []
    for labels in random_names(rng, 1500) + [[b"WwW", b"ExAmPlE"], []]:
        packets.append(packet(labels))
        packets.append(packet(labels, struct.pack("!HH", 28, 1) + OPT_TAIL))
    for _ in range(1500):
        size = rng.randrange(1, 256)
        junk = bytes(rng.choice((1, 2, 3, 7, 0x41, 0x5A, 0x61, 0xC0, 0)) if rng.random() < 0.3
                     else rng.randrange(256) for _ in range(size - 1)) + b"\0"
        tail = struct.pack("!HH", 1, 1) + (OPT_TAIL if rng.random() < 0.5 else b"")
        packets.append(bytes(12) + junk + tail)
    shorter = packet([b"www", b"example"], b"\0\1\0\1\3abc\0")  # the guess runs past its root
    upper = bytes(12) + b"\x03www\x47example\x00\x00\x01\x00\x01"  # 'G' where a length goes
    with_option = packet([b"www"], b"\0\1\0\1\0\0\x29\4\xd0\0\0\0\0\0\4\0\x0a\0\0")
    return packets + [shorter, upper, with_option]


def test_a_guessed_name_holds_exactly_when_the_parser_reads_the_same(parsers):
    """zb_guess_question takes a plain query's name on a guess at its length; zb_guess_holds
    must say yes exactly when zb_parse_question finds that very name, and the fields taken on
    the guess are then the parser's."""
    packets = guess_packets(random.Random(1035))
    for variant in ("sse2", "portable"):
        parsed = run(parsers[variant], packets)
        guessed = subprocess.run([parsers[variant], "guess"],
                                 input="".join(p.hex() + "\n" for p in packets),
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        taken = held = 0
        for pkt, full, line in zip(packets, parsed, guessed, strict=True):
            forms = line.split(" | ")
            assert len(forms) == 2
            for opt, form in enumerate(forms):
                if form == "-":
                    continue
                taken += 1
                holds, fields = form.split(" ", 1)
                same_name = full != "-1" and full.split()[0] == fields.split()[0]
                assert holds == ("1" if same_name else "0"), (pkt.hex(), opt)
                if holds == "1":
                    held += 1
                    assert fields == full, pkt.hex()
        # Every well-formed plain packet (3,004 of them) is taken on the guess and holds.
        assert held >= 3004 and taken > held


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
