"""tests/scale/breakdown.py on a small signed set: every octet of the data is counted once,
the answers with DO set and clear apart, and what it cannot place (pilots, the groups' table,
padding) is a sliver, but for the rest of each region's last page (regions start a page:
compiler/core/layout/layout.c)."""

from __future__ import annotations

from blob import HEAD, Head, server_data
from breakdown import breakdown
from conftest import TESTS, build_set


def test_the_kinds_add_up_to_the_data(tmp_path):
    zone = TESTS / "zones" / "signed" / "example.nsec3.zone"
    build_set(tmp_path, "--zone", f"example.={zone}")
    octets = breakdown(tmp_path)
    assert sum(octets.values()) == len(server_data(tmp_path / "zonebake-server"))
    for kind in ("answers: DO set", "answers: DO clear", "answers: ANY over TCP", "nodes",
                 "names", "type entries", "denial region and CH answers"):
        assert octets[kind] > 0, kind
    data = server_data(tmp_path / "zonebake-server")
    groups = Head._make(HEAD.unpack_from(data)).ngroups
    assert 0 <= octets["pilots, groups' table, padding"] < \
        0.05 * sum(octets.values()) + 4096 * (groups + 1)  # and the tables' last page
