"""Signed zones are checked before anything ships: every signature verified (and the result
cached across builds, so that a rebuild verifies only what changed), signatures close to
expiry reported. The refusals with their positions are in tests/zones/broken/signed-*.zone."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ZONES, require, run_zonebake
from signzone import sign_salted
from zonebake.config import load_toml
from zonebake.core import run as core
from zonebake.dnssec import signatures
from zonebake.errors import CompileError

SIGNED = ZONES / "signed"


def config_for(tmp_path: Path, zone: Path, server: str = ""):
    toml = tmp_path / "zonebake.toml"
    toml.write_text(f'[server]\n{server}\n[[zone]]\norigin = "example."\nfile = "{zone}"\n')
    return load_toml(toml)


def verified(config, data_file: Path) -> int:
    """How many signatures the build verified (the rest came from the cache)."""
    phases = []
    core.bake(config, data_file, on_phase=lambda *phase: phases.append(phase))
    return sum(count for name, _, count, _ in phases if name == "verify")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "cache" / "verified.digests"
    monkeypatch.setattr(signatures, "cache_path", lambda origins: path)
    return path


def test_a_rebuild_verifies_only_the_signatures_that_changed(tmp_path, cache):
    zone = SIGNED / "example.nsec3.zone"
    signed = sum(1 for line in zone.read_text().splitlines() if "\tRRSIG\t" in line)
    config = config_for(tmp_path, zone)
    assert verified(config, tmp_path / "1.bin") == signed
    assert cache.stat().st_size == 32 * signed
    assert verified(config, tmp_path / "2.bin") == 0

    # One record changed: only its signature is verified again, and it fails.
    text = zone.read_text()
    assert text.count("192.0.2.1\n") == 1
    changed = tmp_path / "changed.zone"
    changed.write_text(text.replace("192.0.2.1\n", "192.0.2.99\n"))
    phases = []
    with pytest.raises(CompileError) as refused:
        core.bake(config_for(tmp_path, changed), tmp_path / "3.bin",
                  on_phase=lambda *phase: phases.append(phase))
    assert [count for name, _, count, _ in phases if name == "verify"] == [1]
    [error] = refused.value.diagnostics
    assert str(error).startswith(f"{changed}:")
    assert "the signature does not verify (RFC 4035 §5.3.3)" in error.message
    assert not (tmp_path / "3.bin").exists()
    # A failed build leaves the cache as it was.
    assert verified(config, tmp_path / "4.bin") == 0


def test_a_set_without_signatures_leaves_the_cache_as_it_was(tmp_path, cache):
    """A set with no RRSIG has nothing to look up in the cache (a large signed set's is tens
    of megabytes): the core does not read it, and writes no digests to take its place."""
    config = config_for(tmp_path, SIGNED / "example.nsec3.zone")
    verified(config, tmp_path / "1.bin")
    kept = cache.read_bytes()
    assert len(kept) > 0
    plain = config_for(tmp_path, ZONES / "example.zone")
    assert verified(plain, tmp_path / "2.bin") == 0
    assert cache.read_bytes() == kept
    assert verified(config, tmp_path / "3.bin") == 0  # still whole: nothing verified again


def test_a_forged_signature_is_refused_even_when_its_rrset_was_verified(tmp_path, cache):
    """The cache is keyed by what a signature signs and the signature itself: the same RRset
    with another signature is verified again."""
    zone = SIGNED / "example.nsec.zone"
    config = config_for(tmp_path, zone)
    verified(config, tmp_path / "1.bin")
    lines = zone.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "\tRRSIG\tA " in line)
    signature_line = at + 2  # dnssec-signzone: the times and signer, then the signature
    text = lines[signature_line].strip()
    forged = lines[signature_line].replace(text, ("B" if text[0] != "B" else "C") + text[1:])
    lines[signature_line] = forged
    bad = tmp_path / "forged.zone"
    bad.write_text("".join(lines))
    with pytest.raises(CompileError) as refused:
        core.bake(config_for(tmp_path, bad), tmp_path / "2.bin")
    assert any("does not verify" in d.message for d in refused.value.diagnostics)


def test_signatures_expiring_within_the_warning_window_are_a_warning(tmp_path):
    zone = SIGNED / "example.nsec.zone"  # every signature expires 2036-12-31
    config = config_for(tmp_path, zone, 'signature-warning = "1000w"')
    baked = core.bake(config, tmp_path / "zonedata.bin")
    [warning] = [d for d in baked.warnings if "signature-warning" in d.message]
    assert warning.message.startswith("example. RRSIG SOA (key ")
    assert "expires on 2036-12-31 00:00:00 UTC, within the signature-warning of 7000 days" \
        in warning.message
    quiet = core.bake(config_for(tmp_path, zone), tmp_path / "zonedata.bin")
    assert not [d for d in quiet.warnings if "signature-warning" in d.message]


def test_chain_warnings_come_before_signature_warnings_as_the_checks_run(tmp_path):
    """The chain is checked on a thread beside the signatures (compiler/core/main.c); its
    warnings still come first, as when one check ran after the other, build after build."""
    keygen, signzone = require("bind9-utils", "dnssec-keygen", "dnssec-signzone")
    zone = sign_salted((SIGNED / "example.unsigned.zone").read_text(), "example.", tmp_path,
                       "aabbccdd", 12, keygen, signzone)
    config = config_for(tmp_path, zone, 'signature-warning = "1000w"')
    for _ in range(3):
        baked = core.bake(config, tmp_path / "zonedata.bin")
        messages = [d.message for d in baked.warnings]
        assert messages[0].startswith("NSEC3 iterations 12: RFC 9276 §3.1 says 0")
        assert messages[1].startswith("NSEC3 salt of 4 octets: RFC 9276 §3.1 says none")
        assert "within the signature-warning of 7000 days" in messages[2]
        assert len(messages) == 3


@pytest.mark.parametrize("value", ['"soon"', '"7 days"', "-1", "true"])
def test_a_bad_signature_warning_is_a_usage_error(tmp_path, value):
    toml = tmp_path / "zonebake.toml"
    toml.write_text(f'[server]\nsignature-warning = {value}\n[[zone]]\norigin = "example."\n'
                    f'file = "{SIGNED / "example.nsec.zone"}"\n')
    result = run_zonebake("check", "-c", str(toml))
    assert result.returncode == 2
    assert "signature-warning: expected seconds or a duration such as \"7d\"" in result.stderr


@pytest.mark.parametrize("name", ["nsec", "nsec3", "nsec3-optout", "ldns-nsec", "ldns-nsec3"])
def test_zones_as_the_signers_wrote_them_pass_every_check(name, tmp_path):
    """dnssec-signzone's and ldns-signzone's output builds without an error or a warning."""
    result = run_zonebake("build", "--zone", f"example.={SIGNED / f'example.{name}.zone'}",
                          "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr and "error" not in result.stderr, result.stderr


def test_every_signed_zone_of_a_set_is_verified_on_every_processor(tmp_path, cache,
                                                                    monkeypatch):
    """Two signed zones in one set, their signatures verified by a pool of processes (as
    for a large zone): a broken one is reported with its own file and line."""
    monkeypatch.setattr(signatures, "INLINE", 0)
    monkeypatch.setattr(signatures, "CHUNK", 7)
    fuzz = ZONES.parent / "fuzz" / "zones"
    nsec3 = (fuzz / "nsec3.test.zone").read_text()
    assert nsec3.count("192.0.2.25\n") == 1
    broken = tmp_path / "nsec3.test.zone"
    broken.write_text(nsec3.replace("192.0.2.25\n", "192.0.2.26\n"))
    toml = tmp_path / "zonebake.toml"
    toml.write_text(f'[[zone]]\norigin = "nsec.test."\nfile = "{fuzz / "nsec.test.zone"}"\n'
                    f'[[zone]]\norigin = "nsec3.test."\nfile = "{broken}"\n')
    with pytest.raises(CompileError) as refused:
        core.bake(load_toml(toml), tmp_path / "zonedata.bin")
    [error] = refused.value.diagnostics
    lines = broken.read_text().splitlines()
    address = lines.index("mail.nsec3.test.\t3600\tIN A\t192.0.2.26")
    line = next(i for i in range(address, len(lines)) if "\tRRSIG\tA " in lines[i]) + 1
    assert str(error) == (f"{broken}:{line}: error: mail.nsec3.test. RRSIG A (key 2621, "
                          "algorithm 15): the signature does not verify (RFC 4035 §5.3.3)")
    toml.write_text(f'[[zone]]\norigin = "nsec.test."\nfile = "{fuzz / "nsec.test.zone"}"\n'
                    f'[[zone]]\norigin = "nsec3.test."\nfile = "{fuzz / "nsec3.test.zone"}"\n')
    core.bake(load_toml(toml), tmp_path / "zonedata.bin")
