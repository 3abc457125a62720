"""Zone set configuration (compiler/config.py): the quick reading of plain origins gives
what dnspython's from_text gives, and a bad origin is refused with the same reason."""

from __future__ import annotations

import dns.name
import pytest

from zonebake.config import parse_origin
from zonebake.errors import UsageError

ORIGINS = ["example.com.", "EXAMPLE.Com.", "a.b-c.d_e.*.x.", "x" * 63 + ".test.",
           ".".join(["a" * 63] * 3) + "." + "b" * 61 + ".", "example.com", ".", "@",
           r"ex\.ample.com.", "ex\\065mple.com.", "bücher.example."]
BAD = ["x" * 64 + ".test.", ".".join(["a" * 63] * 4) + ".", "a..b.", "..", ".a."]


@pytest.mark.parametrize("text", ORIGINS)
def test_an_origin_is_the_name_dnspython_reads(text):
    ours, theirs = parse_origin(text, "here"), dns.name.from_text(text)
    assert ours == theirs
    assert ours.labels == theirs.labels  # the spelling too, not only equal ignoring case


@pytest.mark.parametrize("text", BAD)
def test_a_bad_origin_is_refused_for_dnspython_reason(text):
    with pytest.raises(Exception) as theirs:
        dns.name.from_text(text)
    with pytest.raises(UsageError) as ours:
        parse_origin(text, "zonebake.toml: zone #1")
    assert str(ours.value) == f"zonebake.toml: zone #1: bad zone origin {text!r}: {theirs.value}"
