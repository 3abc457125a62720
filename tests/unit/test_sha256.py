"""The core's SHA-256 (compiler/core/base/sha256.c), the key of the signature verification
cache: Python's hashlib's digest for inputs of every length across the block boundaries, with
the portable block and with the SHA extensions' where the processor has them."""

from __future__ import annotations

import hashlib
import random
import subprocess

import pytest

from conftest import ROOT, c_harness


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return c_harness(tmp_path_factory, "sha256_digests",
                     ROOT / "compiler" / "core" / "base" / "sha256.c")


@pytest.mark.parametrize("block", ["portable", "sha-ni"])
def test_sha256_of_every_length_is_hashlibs(binary, block):
    """Lengths 0 to 300: the padding in the last block, or spilling into one more at 56
    octets and every 64 after."""
    if block == "sha-ni":
        which = subprocess.run([str(binary), "--which"], capture_output=True, text=True,
                               check=True).stdout.strip()
        if which != "sha-ni":
            pytest.skip("this processor has no SHA extensions: only the portable block runs")
    rng = random.Random(256)
    inputs = [rng.randbytes(length) for length in range(301)]
    text = "".join((data.hex() or "-") + "\n" for data in inputs)
    flags = ["--portable"] if block == "portable" else []
    out = subprocess.run([str(binary), *flags], input=text, capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert len(out) == len(inputs)
    for data, got in zip(inputs, out, strict=True):
        assert got == hashlib.sha256(data).hexdigest(), len(data)
