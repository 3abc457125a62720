"""--lenient on a pre-signed zone's DNSSEC findings (issue 37), with a zone in the state of
PowerDNS's cryptokeys.org (tests/unpublishedkeys.py): an algorithm of the apex DNSKEY set that
signs nothing, and signatures by a key the apex does not publish. Without --lenient every
finding is an error; with it, those that leave the zone verifiable are warnings and the zone
is built as the file has it, but a signature that fails against a key the apex holds, or an
RRset no key of the apex signs, is still refused. The other signed findings' outcomes under
--lenient are in tests/zones/broken/signed-*.zone (test_broken_zones.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ZONES, run_zonebake
from unpublishedkeys import (ORIGIN, RRSETS, SIGNER, SIGNING, UNPUBLISHED, UNUSED, SignedZone,
                             forged, sign)
from zonebake.config import zones_from_args
from zonebake.core import run as core
from zonebake.dnssec import signatures

WWW = f"www.{ORIGIN}"


@pytest.fixture(scope="module")
def zone(tmp_path_factory) -> SignedZone:
    return sign(tmp_path_factory.mktemp("unpublished-keys"))


def findings(zone: SignedZone, path: Path, severity: str, lenient: bool) -> list[str]:
    """Each RRset's two findings, in the order of the file: no signature by algorithm 10, and
    one by the unpublished key."""
    algorithm = "; validators need only one (RFC 6840 §5.11)" if lenient else ""
    unverified = "; served unverified: validators skip it" if lenient else ""
    found = []
    for owner, rdtype in RRSETS:
        found.append((zone.line(owner, rdtype), f"{owner} {rdtype} has no RRSIG by algorithm "
                      f"{UNUSED}, which the apex DNSKEY set holds (RFC 4035 §2.2){algorithm}"))
        found.append((zone.line(owner, "RRSIG", rdtype), f"{owner} RRSIG {rdtype}: no DNSKEY "
                      f"at the apex has key tag {zone.tags[UNPUBLISHED]} and algorithm "
                      f"{UNPUBLISHED} (RFC 4035 §5.3.1){unverified}"))
    return [f"{path}:{line}: {severity}: {message}" for line, message in sorted(found)]


def said(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if ": error: " in line or
            ": warning: " in line]


def test_without_lenient_each_finding_is_an_error(zone, tmp_path):
    result = run_zonebake("build", "--zone", f"{ORIGIN}={zone.path}", "-o", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert said(result) == findings(zone, zone.path, "error", lenient=False)
    assert result.stderr.endswith(f"zonebake: {2 * len(RRSETS)} error(s); nothing written\n")
    assert not (tmp_path / "zonebake-server").exists()


@pytest.mark.parametrize("command", ["build", "check"])
def test_with_lenient_each_finding_is_a_warning_and_the_zone_builds(zone, tmp_path, command):
    out = ["-o", str(tmp_path / "out")] if command == "build" else []
    result = run_zonebake(command, "--lenient", "--zone", f"{ORIGIN}={zone.path}", *out)
    assert result.returncode == 0, result.stderr
    assert said(result) == findings(zone, zone.path, "warning", lenient=True)
    if command == "build":
        assert (tmp_path / "out" / "zonebake-server").exists()


def test_a_signature_by_the_unpublished_key_is_not_verified(zone, tmp_path, monkeypatch):
    """Nothing here can verify it: under --lenient it is served as the file has it, forged or
    not, as a validator skips it either way."""
    bad = zone.edited(tmp_path / "forged.zone", WWW, "A", UNPUBLISHED, forged)
    monkeypatch.setattr(signatures, "cache_path", lambda origins: tmp_path / "verified.digests")
    phases = []
    baked = core.bake(zones_from_args([f"{ORIGIN}={bad}"]), tmp_path / "zonedata.bin",
                      lenient=True, on_phase=lambda *phase: phases.append(phase))
    assert [str(d) for d in baked.warnings] == findings(zone, bad, "warning", lenient=True)
    # The Ed25519 signature of each RRset, and no other.
    assert [count for name, _, count, _ in phases if name == "verify"] == [len(RRSETS)]


@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_a_signature_that_fails_against_a_key_of_the_apex_is_refused(zone, tmp_path, lenient):
    """Bogus at every validator: no --lenient makes it a warning."""
    bad = zone.edited(tmp_path / "forged.zone", WWW, "A", SIGNING, forged)
    result = run_zonebake("build", *(["--lenient"] if lenient else []), "--zone",
                          f"{ORIGIN}={bad}", "-o", str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    # At the RRSIG RRset's first line, as every finding about one of its signatures.
    failed = (f"{bad}:{zone.line(WWW, 'RRSIG', 'A')}: error: {WWW} RRSIG A (key "
              f"{zone.tags[SIGNING]}, algorithm {SIGNING}): the signature does not verify "
              "(RFC 4035 §5.3.3)")
    if lenient:
        # The verifier's error first, then the core's warnings (compiler/core/run.py).
        assert said(result) == [failed] + findings(zone, bad, "warning", lenient=True)
        assert result.stderr.endswith("zonebake: 1 error(s); nothing written\n")
    else:
        # The core's errors stop the build before anything is verified.
        assert said(result) == findings(zone, bad, "error", lenient=False)
    assert not (tmp_path / "out").exists()


def test_an_rrset_signed_only_by_the_unpublished_key_is_refused(zone, tmp_path):
    """A validator finds no signature it can check for it: bogus, lenient or not."""
    bare = zone.edited(tmp_path / "bare.zone", WWW, "A", SIGNING, lambda fields: None)
    result = run_zonebake("check", "--lenient", "--zone", f"{ORIGIN}={bare}")
    assert result.returncode == 1, result.stderr
    at = f"{bare}:{zone.line(WWW, 'A')}: "
    bogus = (f"{at}error: {WWW} A has no RRSIG by a key of the apex DNSKEY set, so validators "
             "find it bogus (RFC 4035 §2.2, §5.3.1)")
    assert said(result) == [bogus] + replaced(findings(zone, bare, "warning", True), at)
    strict = run_zonebake("check", "--zone", f"{ORIGIN}={bare}")
    assert strict.returncode == 1
    assert said(strict) == findings(zone, bare, "error", lenient=False)


@pytest.mark.parametrize("name,expires", [("signed-expired", 1580515200),
                                          ("signed-not-yet-valid", 2085436800)])
def test_signatures_outside_their_validity_build_with_lenient_and_report_the_expiry(
        name, expires, tmp_path):
    """Served as the file has them, the earliest expiry exported as any signed zone's (the
    server logs it and /metrics has it: tests/e2e/test_lenient_signed.py)."""
    path = ZONES / "broken" / f"{name}.zone"
    config = zones_from_args([f"example.={path}"])
    baked = core.bake(config, tmp_path / "zonedata.bin", lenient=True)
    when, what = (("expired on 2020-02-01 00:00:00 UTC", "have expired")
                  if name == "signed-expired" else
                  ("is not valid until 2035-01-01 00:00:00 UTC", "are not valid yet"))
    assert [str(d) for d in baked.warnings] == [
        f"{path}:11: warning: example. RRSIG SOA (key 23114) {when}; 8 signatures of the zone "
        f"{what} (RFC 4035 §5.3.1); served as the file has them"]
    assert baked.layout.expiries == ((0, expires),)


def test_a_signature_by_another_signer_is_skipped_under_lenient(zone, tmp_path):
    """RFC 4035 §5.3.1: the signer must be the zone's apex, or a validator skips the RRSIG, as
    one by a key it does not have."""
    other = zone.edited(tmp_path / "other.zone", WWW, "A", UNPUBLISHED,
                        lambda fields: fields[:SIGNER] + ["org."] + fields[SIGNER + 1:])
    result = run_zonebake("check", "--lenient", "--zone", f"{ORIGIN}={other}")
    assert result.returncode == 0, result.stderr
    at = f"{other}:{zone.line(WWW, 'RRSIG', 'A')}: "
    assert said(result) == replaced(
        findings(zone, other, "warning", lenient=True), at,
        f"{at}warning: {WWW} RRSIG A (key {zone.tags[UNPUBLISHED]}): the signer is not the "
        f"zone's apex {ORIGIN} (RFC 4035 §5.3.1); served unverified: validators skip it")


@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_a_labels_field_no_owner_matches_stays_an_error(zone, tmp_path, lenient):
    """Malformed: no signer writes it, and no name can be what it signs."""
    wrong = zone.edited(tmp_path / "labels.zone", WWW, "A", UNPUBLISHED,
                        lambda fields: fields[:6] + ["4"] + fields[7:])
    result = run_zonebake("check", *(["--lenient"] if lenient else []), "--zone",
                          f"{ORIGIN}={wrong}")
    assert result.returncode == 1, result.stderr
    at = f"{wrong}:{zone.line(WWW, 'RRSIG', 'A')}: "
    error = (f"{at}error: {WWW} RRSIG A (key {zone.tags[UNPUBLISHED]}): its labels field 4 "
             "exceeds the owner's labels (RFC 4035 §5.3.1)")
    if lenient:
        assert said(result) == [error] + replaced(findings(zone, wrong, "warning", True), at)
    else:
        assert said(result) == replaced(findings(zone, wrong, "error", False), at, error)


def replaced(found: list[str], at: str, instead: str | None = None) -> list[str]:
    """`found` with its one finding at `at` (`FILE:LINE: `) replaced by `instead`, or left
    out."""
    [index] = [i for i, line in enumerate(found) if line.startswith(at)]
    return found[:index] + ([instead] if instead else []) + found[index + 1:]
