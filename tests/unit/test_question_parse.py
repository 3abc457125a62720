"""The question parser (runtime/query/wire.h): RFC 4343 lowercasing of ASCII letters only, the
name's hash the perfect hash's (runtime/hash.h), malformed questions refused; and its SSE2 block
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


def cookie_tail(length: int, code: int = 10, declared: int | None = None) -> bytes:
    """An OPT record whose one option is a COOKIE (RFC 7873 §4) of `length` octets."""
    option = struct.pack("!HH", code, length if declared is None else declared)
    return b"\0" + struct.pack("!HHIH", 41, 1232, 0, 4 + length) + option + bytes(
        range(1, length + 1))


# The tails zb_guess_tail takes (ARCOUNT 1): an OPT without options, with a client cookie
# alone, with a client and a server cookie of RFC 9018's 16 octets.
GUESSED_TAILS = [OPT_TAIL, cookie_tail(8), cookie_tail(24)]
# OPT records the guess leaves to the full parser: other cookie sizes, another option, a
# COOKIE whose length disagrees with the record's.
OTHER_TAILS = [cookie_tail(16), cookie_tail(40), cookie_tail(24, code=3),
               cookie_tail(24, declared=23)]


def guess_packets(rng: random.Random) -> list[bytes]:
    """Plain queries and queries with an OPT record, their names well formed or not: random
    octets ending in a 0, letters where label lengths go, a name shorter than the guess with
    octets after it, OPT records the guess takes and others."""
    packets = []
    for labels in random_names(rng, 1500) + [[b"WwW", b"ExAmPlE"], []]:
        packets.append(packet(labels))
        packets.append(packet(labels, struct.pack("!HH", 28, 1) +
                              rng.choice(GUESSED_TAILS + OTHER_TAILS)))
    for _ in range(1500):
        size = rng.randrange(1, 256)
        junk = bytes(rng.choice((1, 2, 3, 7, 0x41, 0x5A, 0x61, 0xC0, 0)) if rng.random() < 0.3
                     else rng.randrange(256) for _ in range(size - 1)) + b"\0"
        tail = struct.pack("!HH", 1, 1) + (rng.choice(GUESSED_TAILS) if rng.random() < 0.5
                                           else b"")
        packets.append(bytes(12) + junk + tail)
    shorter = packet([b"www", b"example"], b"\0\1\0\1\3abc\0")  # the guess runs past its root
    upper = bytes(12) + b"\x03www\x47example\x00\x00\x01\x00\x01"  # 'G' where a length goes
    # A name that ends where a cookie's guess would put it: "\x13" then 19 octets.
    inside = packet([b"a" * 19], struct.pack("!HH", 1, 1) + OPT_TAIL)
    return packets + [shorter, upper, inside]


def test_a_guessed_name_holds_exactly_when_the_parser_reads_the_same(parsers):
    """zb_guess_question takes a plain query's name on a guess at its length from the end
    (zb_guess_tail); zb_guess_holds must say yes exactly when zb_parse_question finds that
    very name, and the fields taken on the guess are then the parser's."""
    packets = guess_packets(random.Random(1035))
    for variant in ("sse2", "portable"):
        parsed = run(parsers[variant], packets)
        guessed = subprocess.run([parsers[variant], "guess"],
                                 input="".join(p.hex() + "\n" for p in packets),
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        taken = held = expected = 0
        tails = set()
        for pkt, full, line in zip(packets, parsed, guessed, strict=True):
            expected += full != "-1" and pkt[int(full.split()[4]):] in [b""] + GUESSED_TAILS
            forms = line.split(" | ")
            assert len(forms) == 2
            for arcount, form in enumerate(forms):
                if form == "-":
                    continue
                taken += 1
                holds, fields = form.split(" ", 1)
                fields, tail = fields.rsplit(" ", 1)
                same_name = full != "-1" and full.split()[0] == fields.split()[0]
                assert holds == ("1" if same_name else "0"), (pkt.hex(), arcount)
                if holds == "1":
                    held += 1
                    assert fields == full, pkt.hex()
                    assert pkt[int(full.split()[4]):] == pkt[len(pkt) - int(tail) + 4:]
                    tails.add(int(tail))
        # Every well-formed packet that ends in a form guessed (2,000 or so) is taken on the
        # guess and holds, with every tail guessed.
        assert expected > 2000 and held >= expected and taken > held
        assert tails == {4} | {4 + len(t) for t in GUESSED_TAILS}


def test_the_guess_takes_the_cookies_resolvers_send_and_nothing_else(parsers):
    """With ARCOUNT 1, the forms guessed are the OPT record without options and with one
    COOKIE option of 8 or 24 octets; any other OPT is read in full."""
    name = [b"www", b"example"]
    question = struct.pack("!HH", 1, 1)
    lines = subprocess.run(
        [parsers["sse2"], "guess"], capture_output=True, text=True, check=True,
        input="".join(packet(name, question + t).hex() + "\n"
                      for t in GUESSED_TAILS + OTHER_TAILS)).stdout.splitlines()
    for tail, line in zip(GUESSED_TAILS + OTHER_TAILS, lines, strict=True):
        with_opt = line.split(" | ")[1]
        if tail in GUESSED_TAILS:
            assert with_opt.startswith("1 13 2 1 1 29 ") and \
                with_opt.endswith(f" {4 + len(tail)}"), (tail.hex(), line)
        else:
            assert with_opt == "-", (tail.hex(), line)


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
