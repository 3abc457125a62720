"""zonebake against Knot DNS on the same zones: every probe (see probes.py) must get the same
response from both, section by section, or a difference listed in allowed.py."""

from __future__ import annotations

import collections
from dataclasses import replace
from pathlib import Path

import dns.flags
import dns.message
import dns.name
import pytest

from allowed import explain, explain_truncation
from compare import differences, normalize, show
from conftest import Server, build_set
from generated import write_generated_zone
from knotd import Knot, require_knotd
from probes import Probe, zone_probes
import unpublishedkeys

ZONES = Path(__file__).parent / "zones"
SIGNED = Path(__file__).parent.parent / "zones" / "signed"

ZONE_SETS = {
    "features": [("example.", ZONES / "features" / "example.zone"),
                 ("example.net.", ZONES / "features" / "example.net.zone")],
    "parent-and-child": [("example.com.", ZONES / "parentchild" / "example.com.zone"),
                         ("sub.example.com.", ZONES / "parentchild" / "sub.example.com.zone")],
    "rfc4592": [("example.", ZONES / "rfc4592" / "example.zone")],
    "dname-chains": [("example.", ZONES / "dnamechains" / "example.zone")],
    "svcb": [("example.", ZONES / "svcb" / "example.zone")],
    # Every form the fast reader reads, in one file kept by hand (and one it includes).
    "hand-kept": [("example.", ZONES / "handkept" / "example.zone")],
    "rfc1034": "rfc1034",
    **{f"signed-{kind}": [("example.", SIGNED / f"example.{kind}.zone")]
       for kind in ("nsec", "nsec3", "nsec3-optout", "ldns-nsec", "ldns-nsec3")},
    "generated": "generated",
}


def zone_set(name: str, tmp_path: Path) -> list[tuple[str, Path]]:
    spec = ZONE_SETS[name]
    if spec == "generated":
        path = tmp_path / "generated.example.zone"
        write_generated_zone(path, "generated.example.", names=3000, seed=42)
        return [("generated.example.", path)]
    if spec == "rfc1034":
        files = sorted((ZONES / "rfc1034").glob("*.zone"))
        return [("." if f.stem == "root" else f.stem + ".", f) for f in files]
    return spec


# RFC 1034's EDU zone names C.ISI.EDU, below its own ISI.EDU delegation, as a server, with
# no glue for it: zonebake refuses that unless told --lenient (BIND and Knot warn).
LENIENT = {"rfc1034"}


def run_probes(zones, tmp_path, few=False, sample=1.0, lenient=False, dnssec=False,
               binary=None):
    """`binary`: a server built already from what `zones` names (a set signed at build time,
    its signed files written out for Knot); else the zones are built here."""
    require_knotd()
    if binary is None:
        args = [arg for origin, path in zones for arg in ("--zone", f"{origin}={path}")]
        args += ["--lenient"] if lenient else []
        binary = build_set(tmp_path / "zonebake", *args)
    origins = [dns.name.from_text(origin) for origin, _ in zones]
    probes = {}
    for origin, path in zones:
        for p in zone_probes(origin, path, few, sample):
            # The zone that answers is the deepest of the set holding the name.
            answering = max((o for o in origins if p.qname.is_subdomain(o)), key=len)
            key = (p.qname.to_text(), p.qtype, p.qclass)  # case kept: mixed case is a probe
            probes.setdefault(key, replace(p, zone=answering))
    probes = list(probes.values())
    probes.append(Probe(dns.name.from_text("outside-every-zone.invalid."), 1, "in no zone"))
    ours_server = Server(binary)
    knot = Knot(zones, tmp_path / "knot")
    unexplained, allowed = [], collections.Counter()
    try:
        for probe in probes:
            # With DO set (RFC 3225) the answers carry signatures and denial proofs.
            query = dns.message.make_query(probe.qname, probe.qtype, probe.qclass,
                                           use_edns=0 if dnssec else False,
                                           want_dnssec=dnssec)
            query.flags = 0  # RD clear: an authoritative question
            ours, theirs = ours_server.send(query), knot.query(query)
            diff = differences(normalize(ours), normalize(theirs))
            if not diff:
                continue
            reason = explain(probe, ours, theirs)
            if reason is None and ours.flags & dns.flags.TC:
                reason = explain_truncation(ours, ours_server.send_tcp(query), theirs,
                                            lambda a, b: not differences(normalize(a),
                                                                         normalize(b)))
            if reason:
                allowed[reason] += 1
            else:
                unexplained.append(f"{probe}: {', '.join(diff)} differ\n zonebake:\n"
                                   f"{show(ours)}\n knot:\n{show(theirs)}")
        assert ours_server.alive()
    finally:
        ours_server.stop()
        knot.stop()
    return len(probes), unexplained, allowed


@pytest.mark.parametrize("name", list(ZONE_SETS))
def test_same_answers_as_knot(name, tmp_path):
    zones = zone_set(name, tmp_path)
    few = name == "generated"
    count, unexplained, allowed = run_probes(zones, tmp_path, few=few,
                                             sample=0.3 if few else 1.0,
                                             lenient=name in LENIENT)
    print(f"{name}: {count} probes, {sum(allowed.values())} allowed differences {dict(allowed)}")
    assert count > 50
    assert not unexplained, (f"{len(unexplained)} of {count} probes differ from Knot:\n\n"
                             + "\n\n".join(unexplained[:15]))


SIGNED_SETS = [name for name in ZONE_SETS if name.startswith("signed-")]


@pytest.mark.parametrize("name", SIGNED_SETS)
def test_same_signed_answers_as_knot(name, tmp_path):
    """DO set: every RRset with its RRSIGs, every negative answer with its proof."""
    count, unexplained, allowed = run_probes(zone_set(name, tmp_path), tmp_path, dnssec=True)
    print(f"{name} with DO: {count} probes, {sum(allowed.values())} allowed differences "
          f"{dict(allowed)}")
    assert count > 50
    assert not unexplained, (f"{len(unexplained)} of {count} probes differ from Knot:\n\n"
                             + "\n\n".join(unexplained[:15]))


@pytest.mark.parametrize("dnssec", [False, True], ids=["plain", "do"])
def test_a_zone_signed_by_an_unpublished_key_answers_as_knot(dnssec, tmp_path):
    """--lenient serves the zone of tests/unpublishedkeys.py (PowerDNS's cryptokeys.org's
    state: an algorithm that signs nothing, RRSIGs by an unpublished key) as Knot does: every
    RRSIG of the file, with DO set (issue 37)."""
    zone = unpublishedkeys.sign(tmp_path / "keys")
    count, unexplained, allowed = run_probes([(unpublishedkeys.ORIGIN, zone.path)], tmp_path,
                                             lenient=True, dnssec=dnssec)
    print(f"unpublished keys: {count} probes, {sum(allowed.values())} allowed differences "
          f"{dict(allowed)}")
    assert count > 20
    assert not unexplained, (f"{len(unexplained)} of {count} probes differ from Knot:\n\n"
                             + "\n\n".join(unexplained[:15]))
