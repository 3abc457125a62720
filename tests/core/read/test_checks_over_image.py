"""A build over the image of a build that said nothing checks only what its change can have
made wrong (compiler/core/semantics/zones.c, check_changed): the records changed, the names
they name, the NS and MX owners naming a name that lost its addresses or became an alias.
Each edit here makes one check speak about a record the change did not touch (or about the
change itself), and the build over the image must say what the whole file's build says,
octet for octet, errors and warnings alike; an edit that makes nothing wrong says nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from test_reading_over_image import bake
from zonebake.config import zones_from_args

ZONE = [
    "$TTL 300",
    "@ SOA ns1 hostmaster 1 7200 900 1209600 300",
    "@ NS ns1",
    "@ NS ns2",
    "@ MX 10 mail",
    "ns1 A 192.0.2.1",
    "ns2 A 192.0.2.2",
    "mail A 192.0.2.25",
    "www A 192.0.2.80",
    "shop MX 10 mail",
    "dom NS ns1.dom",
    "dom NS ns2.dom",
    "ns1.dom A 198.51.100.1",
    "ns2.dom A 198.51.100.2",
    "side NS ns1.dom",
    "host A 192.0.2.90",
    "host TXT \"x\"",
    "below.host A 192.0.2.91",
    "other NS ns.elsewhere.example.net.",
]


def replaced(old: str, *new: str) -> list[str]:
    at = ZONE.index(old)
    return ZONE[:at] + list(new) + ZONE[at + 1:]


def added(*new: str) -> list[str]:
    return ZONE + list(new)


# Each edit, and what the whole file's build says of it ("" for nothing).
EDITS = {
    "glue taken from an NS untouched": (
        replaced("ns2.dom A 198.51.100.2"), "dom.test. NS ns2.dom.test.: no A or AAAA"),
    "the apex's name server without address": (
        replaced("ns1 A 192.0.2.1"), "test. NS ns1.test.: no A or AAAA"),
    "an MX target made an alias": (
        replaced("mail A 192.0.2.25", "mail CNAME www"), "MX mail.test. is an alias"),
    "glue no NS names any more": (
        replaced("dom NS ns2.dom"), "ns2.dom.test. A lies below a delegation"),
    "glue added that no NS names": (
        added("extra.dom A 198.51.100.9"), "extra.dom.test. A lies below a delegation"),
    "a cut made above a name from before": (
        added("host NS ns1.dom"), "below.host.test. A lies below a delegation"),
    "a CNAME beside other data": (
        added("www CNAME host"), "www.test. has a CNAME and A data"),
    "an SOA below the apex": (
        added("sub SOA ns1 hostmaster 2 7200 900 1209600 300"), "which is not the zone apex"),
    "a wildcard with NS": (added("*.wild NS ns1.dom"), "wildcard *.wild.test. has NS"),
    "an address changed": (replaced("www A 192.0.2.80", "www A 192.0.2.81"), ""),
    "glue named by another NS as well": (replaced("side NS ns1.dom", "side NS ns2.dom"), ""),
    "a delegation added with its glue": (
        added("new NS ns.new", "ns.new A 198.51.100.20"), ""),
    "a name removed that an MX named": (
        [line for line in ZONE if not line.startswith("shop ")], ""),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_checks_of_a_change_say_what_the_whole_says(tmp_path, edit):
    lines, said = EDITS[edit]
    path = tmp_path / "test.zone"
    config = zones_from_args([f"test.={path}"])
    path.write_text("\n".join(ZONE) + "\n")
    base: list[str] = []
    outputs, _ = bake(config, tmp_path / "base", base)
    assert outputs is not None and outputs[3] == [] and base == []  # it says nothing
    shutil.copytree(tmp_path / "base", tmp_path / "over")
    path.write_text("\n".join(lines) + "\n")
    full_errors: list[str] = []
    over_errors: list[str] = []
    full, _ = bake(config, tmp_path / "full", full_errors)
    over, over_image = bake(config, tmp_path / "over", over_errors)
    assert over_image  # read over the image: its checks were of the change alone
    assert over == full and over_errors == full_errors
    spoken = full_errors + (full[3] if full else [])
    if said:
        assert any(said in line for line in spoken), spoken
    else:
        assert spoken == []
