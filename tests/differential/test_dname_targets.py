"""A DNAME whose target is in its own zone, at the apex or anywhere below it (issue 37: a
signed zone with a DNAME to its own apex crashed the core), signed every way zonebake serves
it, against Knot serving the same signed files: signed at build time with NSEC, NSEC3 and
NSEC3 opt-out (Knot serves what --write-signed wrote), and pre-signed by dnssec-signzone the
same three ways. Every probe (probes.py: below each DNAME, the image of every name below its
target, names that do not exist there) with DO set and clear gets the same response from
both, or a difference listed in allowed.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildsigned import build, keygen
from conftest import require
from signzone import sign
from test_differential import run_probes

# The zone of the issue, as a new user wrote it.
APEX_ZONE = """$ORIGIN {origin}
$TTL 600
@ SOA ns1 hostmaster 7 3600 900 604800 120
@ NS ns1
ns1 A 192.0.2.1
dn2 DNAME {target}
"""

# A zone with a name of every kind a DNAME's target can be: a leaf, a name with children, an
# empty non-terminal, a wildcard's parent and a name it matches, a delegation, and a name
# that does not exist.
RICH_ZONE = """$ORIGIN {origin}
$TTL 600
@ SOA ns1 hostmaster 7 3600 900 604800 120
@ NS ns1
ns1 A 192.0.2.1
b TXT "b"
x.b A 192.0.2.2
x.b TXT "x.b"
y.c A 192.0.2.3
*.w TXT "wild"
sub NS ns.sub
ns.sub A 192.0.2.4
dn2 DNAME {target}
"""

# (label, zone, the DNAME's target relative to the zone's origin, "@" the apex)
TARGETS = [("apex", APEX_ZONE, "@"), ("rich-apex", RICH_ZONE, "@"),
           ("leaf", RICH_ZONE, "ns1"), ("parent", RICH_ZONE, "b"),
           ("empty-non-terminal", RICH_ZONE, "c"), ("wildcard-parent", RICH_ZONE, "w"),
           ("wildcard-match", RICH_ZONE, "v.w"), ("delegation", RICH_ZONE, "sub"),
           ("missing", RICH_ZONE, "nx")]

SIGNINGS = {"nsec": ("nsec", False), "nsec3": ("nsec3", False), "nsec3-optout": ("nsec3", True)}


def write_zones(directory: Path) -> list[tuple[str, Path]]:
    zones = []
    for label, text, target in TARGETS:
        origin = f"{label}.r.test."
        path = directory / f"{label}.zone"
        path.write_text(text.format(origin=origin,
                                    target=origin if target == "@" else f"{target}.{origin}"))
        zones.append((origin, path))
    return zones


def assert_answers_as_knot(signed: list[tuple[str, Path]], tmp_path: Path,
                           binary: Path | None = None) -> None:
    """With DO clear and set, every probe as Knot answers it, or an allowed difference."""
    for dnssec in (False, True):
        count, unexplained, _ = run_probes(signed, tmp_path / f"do{int(dnssec)}",
                                           dnssec=dnssec, binary=binary)
        assert count > 200
        assert not unexplained, (f"{len(unexplained)} of {count} probes differ from Knot:\n\n"
                                 + "\n\n".join(unexplained[:15]))


@pytest.mark.parametrize("signing", list(SIGNINGS))
def test_built_signed_answers_below_a_dname_as_knot(signing, tmp_path):
    denial, opt_out = SIGNINGS[signing]
    zones = write_zones(tmp_path)
    toml = tmp_path / "zonebake.toml"
    entries = []
    for origin, path in zones:
        keys = tmp_path / "keys" / origin
        keygen(keys, origin, ksk=True)
        entries.append(f'[[zone]]\norigin = "{origin}"\nfile = "{path}"\n'
                       f'dnssec = {{ keys = "{keys}", denial = "{denial}", '
                       f'nsec3-opt-out = {str(opt_out).lower()} }}\n')
    toml.write_text("".join(entries))
    written = tmp_path / "signed"
    written.mkdir()
    built = build(toml, tmp_path / "out", "--write-signed", str(written))
    assert built.returncode == 0, built.stderr
    signed = [(origin, written / f"{origin}zone") for origin, _ in zones]
    assert all(path.exists() for _, path in signed), sorted(written.iterdir())
    assert_answers_as_knot(signed, tmp_path, tmp_path / "out" / "zonebake-server")


@pytest.mark.parametrize("signing", list(SIGNINGS))
def test_presigned_answers_below_a_dname_as_knot(signing, tmp_path):
    require("bind9-utils", "dnssec-keygen", "dnssec-signzone")
    signed = [(origin, sign(path, origin, tmp_path / origin, kinds=(signing,))[signing])
              for origin, path in write_zones(tmp_path)]
    assert_answers_as_knot(signed, tmp_path)
