"""A build over an earlier build does not check a zone's NSEC or NSEC3 chain again when
nothing the check reads changed (its names, their types, the chain's records) and the earlier
check found nothing (compiler/core/dnssec/chaincheck.c). Anything else is checked again: a
chain broken since is refused, and the warnings of a chain come every build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import ZONES, require
from signzone import sign_salted
from zonebake.config import load_toml
from zonebake.core import run as core
from zonebake.dnssec import signatures
from zonebake.errors import CompileError

SIGNED = ZONES / "signed"
KEPT = "chains as checked before"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(signatures, "cache_path", lambda origins: tmp_path / "verified")


def config_for(tmp_path: Path, zone: Path):
    toml = tmp_path / "zonebake.toml"
    toml.write_text(f'[server]\n[[zone]]\norigin = "example."\nfile = "{zone}"\n')
    return load_toml(toml)


def bake(config, out: Path, earlier: Path | None) -> tuple[core.Baked, dict[str, int]]:
    """A build into OUT over the one in EARLIER (None: a full build), and the counts the
    core reported."""
    out.mkdir(parents=True)
    earlier = earlier or out / "none"
    state = core.State(out / "zonedata.state", earlier / "zonedata.state",
                       earlier / "zonedata.bin")
    counts: dict[str, int] = {}
    baked = core.bake(config, out / "zonedata.bin", state=state,
                      on_phase=lambda name, seconds, count, unit: counts.update({name: count}))
    return baked, counts


def test_a_chain_broken_since_the_earlier_build_is_refused(tmp_path):
    zone = tmp_path / "example.zone"
    shutil.copy(SIGNED / "example.nsec3.zone", zone)
    config = config_for(tmp_path, zone)
    first, counts = bake(config, tmp_path / "1", None)
    assert KEPT not in counts
    again, counts = bake(config, tmp_path / "2", tmp_path / "1")
    assert counts[KEPT] == 1
    assert (tmp_path / "2" / "zonedata.bin").read_bytes() == \
        (tmp_path / "1" / "zonedata.bin").read_bytes()
    # The apex's NSEC3 without RRSIG among its types: only the chain check sees it (its
    # signature is verified after the core's checks, which refuse the zone first).
    apex = "A NS SOA MX RRSIG DNSKEY NSEC3PARAM )"
    assert zone.read_text().count(apex) == 1
    zone.write_text(zone.read_text().replace(apex, "A NS SOA MX DNSKEY NSEC3PARAM )"))
    with pytest.raises(CompileError) as refused:
        bake(config, tmp_path / "3", tmp_path / "2")
    [error] = [d for d in refused.value.diagnostics if "lists" in d.message]
    line = zone.read_text().splitlines().index(
        "3MSEV9USMD4BR9S97V51R2TDVMR9IQO1.example. 300 IN NSEC3 1 0 0 - (") + 1
    assert (error.position.file, error.position.line) == (str(zone), line)
    assert error.message == ("NSEC3 at 3MSEV9USMD4BR9S97V51R2TDVMR9IQO1.example. lists A NS "
                             "SOA MX DNSKEY NSEC3PARAM, but example. holds A NS SOA MX RRSIG "
                             "DNSKEY NSEC3PARAM: RRSIG held, not listed (RFC 4034 §4.1.2)")


def test_a_chain_with_warnings_is_checked_and_warned_of_every_build(tmp_path):
    keygen, signzone = require("bind9-utils", "dnssec-keygen", "dnssec-signzone")
    zone = sign_salted((SIGNED / "example.unsigned.zone").read_text(), "example.", tmp_path,
                       "aabbccdd", 0, keygen, signzone)
    config = config_for(tmp_path, zone)
    earlier = None
    for build in ("1", "2", "3"):
        baked, counts = bake(config, tmp_path / build, earlier)
        assert [d.message for d in baked.warnings] == [
            "NSEC3 salt of 4 octets: RFC 9276 §3.1 says none"]
        assert KEPT not in counts
        earlier = tmp_path / build
