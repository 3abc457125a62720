"""Signing at build time (issue 17), as files: reproducible with SOURCE_DATE_EPOCH (binary
included, Ed25519 and ECDSA alike), no private key in the output, the signed zone written
out accepted by ldns-verify-zone and dnssec-verify, the keys' timing metadata obeyed (a
rollover's pre-published and retired keys), a signed input refused, and a rebuild signing
only what changed."""

from __future__ import annotations

import base64
import os
import subprocess
import time
from pathlib import Path

import dns.dnssec
import dns.name
import dns.rdatatype
import dns.zone
import pytest

from buildsigned import (EPOCH, EVERY_FORM, ORIGIN, ZONE, build, dname_to_apex, keygen,
                         private_octets, signed_set)
from blob import server_data
from conftest import require
from zonebake.config import load_toml
from zonebake.core import run as core
from zonebake.dnssec import signing
from zonebake.errors import CompileError, UsageError

OUTPUTS = ("zonedata.c", "zonebake-server", "zonedata.state")
ORG = dns.name.from_text("example.org.")


def two_zone_set(directory: Path) -> Path:
    """example.com. with Ed25519 keys and NSEC3, example.org. with ECDSA P-256 and NSEC."""
    toml = signed_set(directory, "nsec3")
    keygen(directory / "org-keys", "example.org.", "ecdsap256sha256", ksk=True)
    keygen(directory / "org-keys", "example.org.", "ecdsap256sha256")
    (directory / "example.org.zone").write_text(ZONE.replace("example.com.", "example.org."))
    with toml.open("a") as f:
        f.write('[[zone]]\norigin = "example.org."\nfile = "example.org.zone"\n'
                f'dnssec = {{ keys = "{directory / "org-keys"}", denial = "nsec" }}\n')
    return toml


def outputs(outdir: Path, signed: Path) -> dict[str, bytes]:
    # A sanitizer build (-g) records the directory it was compiled in: its binary differs,
    # not the data inside it.
    compared = OUTPUTS[:1] if os.environ.get("ZONEBAKE_SANITIZE") else OUTPUTS[:2]
    files = {name: (outdir / name).read_bytes() for name in compared}
    files["data"] = server_data(outdir / "zonebake-server")
    for zone in sorted(signed.iterdir()):
        files[zone.name] = zone.read_bytes()
    return files


def zone_records(path: Path, origin: dns.name.Name):
    """(owner, type, covered, TTL, text) of each record; an RRSIG's text without its times
    and signature."""
    zone = dns.zone.from_file(str(path), origin, relativize=False)
    out = set()
    for name, ttl, rdata in zone.iterate_rdatas():
        text = rdata.to_text()
        if rdata.rdtype == dns.rdatatype.RRSIG:
            text = (rdata.type_covered, rdata.algorithm, rdata.labels, rdata.original_ttl,
                    rdata.key_tag, rdata.signer)
        out.add((name, rdata.rdtype, rdata.covers(), ttl, str(text)))
    return out


def test_builds_at_one_epoch_are_byte_identical_and_another_differs_in_signatures_only(
        tmp_path):
    toml = two_zone_set(tmp_path)
    runs = {}
    for run, epoch in (("one", EPOCH), ("two", EPOCH), ("three", EPOCH - 86400)):
        # Each with a cache of its own: the signatures are made again, not reused.
        built = build(toml, tmp_path / run, "--write-signed", str(tmp_path / f"{run}-signed"),
                      epoch=epoch, cache=tmp_path / f"{run}-cache")
        assert built.returncode == 0, built.stderr
        runs[run] = outputs(tmp_path / run, tmp_path / f"{run}-signed")
    assert runs["one"] == runs["two"]
    assert {"data", "example.com.zone", "example.org.zone"} <= set(runs["one"])
    assert runs["one"]["data"] != runs["three"]["data"]
    for origin in ("example.com.", "example.org."):
        one, three = (tmp_path / f"{run}-signed" / f"{origin}zone" for run in ("one", "three"))
        assert one.read_bytes() != three.read_bytes()
        name = dns.name.from_text(origin)
        assert zone_records(one, name) == zone_records(three, name)


def test_no_private_key_reaches_the_output(tmp_path):
    toml = two_zone_set(tmp_path)
    built = build(toml, tmp_path / "out", epoch=EPOCH)
    assert built.returncode == 0, built.stderr
    secrets = [private_octets(key) for key in (tmp_path / "keys").glob("*.key")]
    secrets += [private_octets(key) for key in (tmp_path / "org-keys").glob("*.key")]
    assert len(secrets) == 4 and all(len(secret) == 32 for secret in secrets)
    for name in OUTPUTS:
        data = (tmp_path / "out" / name).read_bytes()
        for secret in secrets:
            for form in (secret, base64.b64encode(secret), secret.hex().encode()):
                assert form not in data, name


@pytest.mark.parametrize("denial,opt_out", [("nsec", False), ("nsec3", False), ("nsec3", True)])
def test_the_signed_zone_written_out_is_accepted_by_the_peers_verifiers(tmp_path, denial,
                                                                       opt_out):
    ldns, bind = require("ldnsutils", "ldns-verify-zone")[0], require("bind9-utils",
                                                                       "dnssec-verify")[0]
    # Every form the writer has, and the generic one: a record written otherwise than the
    # zone holds it would fail its signature.
    toml = signed_set(tmp_path, denial, opt_out, zone=ZONE + EVERY_FORM)
    written = tmp_path / "signed.zone"
    built = build(toml, tmp_path / "out", "--write-signed", str(written))
    assert built.returncode == 0, built.stderr
    verified = subprocess.run([ldns, str(written)], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0 and "Zone is verified and complete" in verified.stdout, \
        verified.stdout + verified.stderr
    verified = subprocess.run([bind, "-o", "example.com.", str(written)], capture_output=True,
                              text=True, timeout=60)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "KSKs: 1 active" in verified.stdout and "ZSKs: 1 active" in verified.stdout


def test_write_signed_needs_a_signed_zone_and_a_directory_for_several(tmp_path):
    toml = two_zone_set(tmp_path)
    (tmp_path / "file").write_text("")
    built = build(toml, tmp_path / "out", "--write-signed", str(tmp_path / "file"))
    assert built.returncode == 2
    assert built.stderr == (f"zonebake: --write-signed {tmp_path / 'file'}: 2 zones are "
                            f"signed: give a directory\n")
    plain = tmp_path / "plain.toml"
    plain.write_text('[[zone]]\norigin = "example.com."\nfile = "example.com.zone"\n')
    built = build(plain, tmp_path / "out", "--write-signed", str(tmp_path / "signed.zone"))
    assert built.returncode == 2
    assert built.stderr == (f"zonebake: --write-signed {tmp_path / 'signed.zone'}: no zone has "
                            f"a dnssec table\n")


def set_timing(key_base: Path, **times: str) -> None:
    """BIND's timing metadata in a .private file (as dnssec-settime writes it)."""
    private = key_base.with_name(key_base.name + ".private")
    private.write_text(private.read_text() + "".join(f"{name}: {value}\n"
                                                     for name, value in times.items()))


def dnskeys_and_signers(tmp_path: Path, toml: Path) -> tuple[set[int], set[int]]:
    written = tmp_path / "signed.zone"
    built = build(toml, tmp_path / "out", "--write-signed", str(written), epoch=EPOCH)
    assert built.returncode == 0, built.stderr
    zone = dns.zone.from_file(str(written), ORIGIN, relativize=False)
    tags = {dns.dnssec.key_id(k) for k in zone.find_rdataset(ORIGIN, "DNSKEY")}
    signers = {rdata.key_tag for _, _, rdata in zone.iterate_rdatas()
               if rdata.rdtype == dns.rdatatype.RRSIG}
    return tags, signers


def stamp(days: int) -> str:
    """A time `days` from EPOCH as BIND's metadata gives it."""
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(EPOCH + days * 86400))


def tag_of(base: str) -> int:
    return int(base.rsplit("+", 1)[1])


def test_a_rollover_follows_the_keys_timing_metadata(tmp_path):
    """Pre-publish ZSK rollover (RFC 6781 §4.1.1.1): the next key published before it signs,
    the old one published after it stops; a key past its Delete time is gone."""
    keys = tmp_path / "keys"
    ksk, old, new, gone = (keygen(keys, ksk=True), keygen(keys), keygen(keys), keygen(keys))
    set_timing(keys / old, Inactive=stamp(-1))                 # retired, still published
    set_timing(keys / new, Publish=stamp(-30), Activate=stamp(-1))
    set_timing(keys / gone, Inactive=stamp(-60), Delete=stamp(-30))
    toml = signed_set(tmp_path, keys=keys)
    tags, signers = dnskeys_and_signers(tmp_path, toml)
    assert tags == {tag_of(ksk), tag_of(old), tag_of(new)}
    assert signers == {tag_of(ksk), tag_of(new)}


def test_a_key_not_yet_active_is_published_only(tmp_path):
    keys = tmp_path / "keys"
    ksk, zsk, next_ksk = keygen(keys, ksk=True), keygen(keys), keygen(keys, ksk=True)
    set_timing(keys / next_ksk, Publish=stamp(-1), Activate=stamp(30))
    tags, signers = dnskeys_and_signers(tmp_path, signed_set(tmp_path, keys=keys))
    assert tags == {tag_of(ksk), tag_of(zsk), tag_of(next_ksk)}
    assert signers == {tag_of(ksk), tag_of(zsk)}


def test_no_signing_key_is_a_usage_error(tmp_path):
    keys = tmp_path / "keys"
    ksk = keygen(keys, ksk=True)
    set_timing(keys / ksk, Activate=stamp(1))
    built = build(signed_set(tmp_path, keys=keys), tmp_path / "out", epoch=EPOCH)
    assert built.returncode == 2
    assert built.stderr == (f"zonebake: {tmp_path / 'example.com.zone'}: dnssec: no key pair "
                            f"in {keys} signs example.com. at "
                            f"{time.strftime('%Y-%m-%d 00:00:00', time.gmtime(EPOCH))} UTC; make one "
                            f"with: zonebake keygen example.com. --ksk -d {keys}\n")
    assert not (tmp_path / "out").exists()


def test_a_zone_given_signed_is_refused_with_its_lines(tmp_path):
    zone = ZONE + ("www NSEC mail.example.com. CNAME RRSIG NSEC\n"
                   "www RRSIG CNAME 15 3 3600 20261210000000 20261126000000 1 example.com. "
                   "AAAA\n")
    built = build(signed_set(tmp_path, zone=zone), tmp_path / "out", epoch=EPOCH)
    assert built.returncode == 1
    path = tmp_path / "example.com.zone"
    lines = built.stderr.splitlines()
    assert lines[0] == (f"{path}:19: error: www.example.com. NSEC: the zone is signed by the "
                        f"build (its dnssec table), so it is given unsigned, without RRSIG, NSEC, "
                        f"NSEC3 or NSEC3PARAM records")
    assert lines[1].startswith(f"{path}:20: error: www.example.com. RRSIG: ")
    assert lines[-1] == "zonebake: 2 error(s); nothing written"


def test_past_ten_records_of_a_signed_zone_one_line_counts_the_rest(tmp_path):
    zone = ZONE + "".join(f"n{i} NSEC n{i + 1}.example.com. A RRSIG NSEC\n" for i in range(25))
    built = build(signed_set(tmp_path, zone=zone), tmp_path / "out", epoch=EPOCH)
    assert built.returncode == 1
    errors = [line for line in built.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 11, built.stderr  # by line: the count at the first one's
    assert errors[1] == (f"{tmp_path / 'example.com.zone'}:19: error: 15 more records of a "
                         f"signed zone")


def signatures_made(config, data_file: Path, monkeypatch) -> int:
    """How many signatures the build made (the rest came from the cache)."""
    made = []
    real = signing.sign
    monkeypatch.setattr(signing, "sign", lambda requests, signed, key_files, count, along: (
        made.append(count), real(requests, signed, key_files, count, along))[1])
    core.bake(config, data_file)
    return sum(made)


def test_a_rebuild_signs_only_what_changed(tmp_path, monkeypatch):
    cache = tmp_path / "cache" / "signed"
    monkeypatch.setattr(signing, "cache_path", lambda origins: cache)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    toml = signed_set(tmp_path, "nsec3")
    first = signatures_made(load_toml(toml), tmp_path / "1.bin", monkeypatch)
    # 14 authoritative RRsets, 12 NSEC3 records and their NSEC3PARAM, 3 RRsets by the KSK
    assert first > 25
    assert signatures_made(load_toml(toml), tmp_path / "2.bin", monkeypatch) == 0
    changed = ZONE.replace("192.0.2.25", "192.0.2.26")
    (tmp_path / "example.com.zone").write_text(changed)
    assert signatures_made(load_toml(toml), tmp_path / "3.bin", monkeypatch) == 1
    # A new name: its RRset, its NSEC3 and the one before it in the chain.
    (tmp_path / "example.com.zone").write_text(changed + "new A 192.0.2.8\n")
    assert signatures_made(load_toml(toml), tmp_path / "4.bin", monkeypatch) == 3


def trailed_build(config, data_file: Path) -> tuple[int, int, bytes]:
    """(signatures taken by their trail, signatures digested for the check, the data)."""
    phases = {}
    core.bake(config, data_file,
              on_phase=lambda name, seconds, count, unit: phases.update({name: count}))
    return (phases.get("signatures by their trail", 0), phases.get("signatures", 0),
            data_file.read_bytes())


# Enough names that most signatures are past the check's sample (the first 64 of a zone).
HOSTS = "".join(f"h{i} A 192.0.2.{i % 250 + 1}\n" for i in range(300))


def test_an_unchanged_rrset_takes_its_signature_by_the_trail(tmp_path, monkeypatch):
    """The cache keeps the order the build signed in and, per signature, what it covered: a
    rebuild takes the signatures of RRsets as they were without their canonical form, their
    digests or a lookup, checks a sample of them, and writes what a build without the trail
    writes."""
    cache = tmp_path / "cache" / "signed"
    monkeypatch.setattr(signing, "cache_path", lambda origins: cache)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    toml = signed_set(tmp_path, "nsec3", zone=ZONE + HOSTS)
    trailed, every, first = trailed_build(load_toml(toml), tmp_path / "1.bin")
    assert trailed == 0 and every > 600  # no cache yet: every signature digested
    trailed, sampled, again = trailed_build(load_toml(toml), tmp_path / "2.bin")
    assert (trailed, again) == (every, first)
    assert 64 <= sampled < every // 4  # the first 64 and about one in 256 of the rest

    # One address changed: its RRset's signature is made again, every other is taken.
    (tmp_path / "example.com.zone").write_text(ZONE.replace("192.0.2.25", "192.0.2.26") + HOSTS)
    trailed, sampled, changed = trailed_build(load_toml(toml), tmp_path / "3.bin")
    assert trailed == every - 1 and sampled < every // 4
    # A cache whose trail is cut off: its signatures are looked up by digest, as before.
    whole = cache.read_bytes()
    cache.write_bytes(whole[:-10])
    trailed, digested, looked_up = trailed_build(load_toml(toml), tmp_path / "4.bin")
    assert (trailed, digested, looked_up) == (0, every, changed)
    # No cache at all: the same octets, every signature made.
    cache.unlink()
    assert trailed_build(load_toml(toml), tmp_path / "5.bin") == (0, every, changed)


def test_a_trail_naming_other_signatures_fails_the_build(tmp_path, monkeypatch):
    """The check's sample of the signatures taken by their trail is looked up in the
    verification cache: a trail that names the wrong signatures sends them to verify, where
    they fail."""
    cache = tmp_path / "cache" / "signed"
    monkeypatch.setattr(signing, "cache_path", lambda origins: cache)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    toml = signed_set(tmp_path, "nsec3", zone=ZONE + HOSTS)
    trailed_build(load_toml(toml), tmp_path / "1.bin")
    # The file: magic, count, the signatures (108 octets each), padding to 8, the trail's
    # count, its entries (id, content, place, spare: 24 octets). Every place one further on.
    data = bytearray(cache.read_bytes())
    count = int.from_bytes(data[8:16], "little")
    at = 8 + (8 + count * 108 + 7) // 8 * 8
    entries = int.from_bytes(data[at:at + 8], "little")
    for i in range(entries):
        place = at + 8 + 24 * i + 16
        moved = (int.from_bytes(data[place:place + 4], "little") + 1) % count
        data[place:place + 4] = moved.to_bytes(4, "little")
    cache.write_bytes(bytes(data))
    with pytest.raises(CompileError) as refused:
        core.bake(load_toml(toml), tmp_path / "2.bin")
    assert "the signature does not verify (RFC 4035 §5.3.3)" in str(refused.value)
    assert not (tmp_path / "2.bin").exists()


def test_with_an_epoch_cached_signatures_are_reused_only_with_their_very_times(tmp_path,
                                                                                monkeypatch):
    cache = tmp_path / "cache" / "signed"
    monkeypatch.setattr(signing, "cache_path", lambda origins: cache)
    toml = signed_set(tmp_path, "nsec")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    first = signatures_made(load_toml(toml), tmp_path / "1.bin", monkeypatch)
    assert signatures_made(load_toml(toml), tmp_path / "2.bin", monkeypatch) == 0
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH + 60))
    assert signatures_made(load_toml(toml), tmp_path / "3.bin", monkeypatch) == first


def test_a_failed_build_signs_nothing_it_keeps(tmp_path, monkeypatch):
    cache = tmp_path / "cache" / "signed"
    monkeypatch.setattr(signing, "cache_path", lambda origins: cache)
    toml = signed_set(tmp_path, "nsec3", zone=ZONE + "broken CNAME x\nbroken A 192.0.2.9\n")
    with pytest.raises(CompileError):
        core.bake(load_toml(toml), tmp_path / "1.bin")
    assert not cache.exists()


@pytest.mark.parametrize("value", ["yesterday", "²", "-5", "253402300800",
                                   "99999999999999999999"])
def test_a_bad_source_date_epoch_is_a_usage_error(monkeypatch, value):
    """Not ASCII digits ('²' is a digit to str.isdigit, not to int), or past the year 9999
    (time.gmtime overflowed on 10^20, a traceback)."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    with pytest.raises(UsageError) as refused:
        signing.build_time()
    assert str(refused.value) == (f"SOURCE_DATE_EPOCH={value!r}: expected seconds since 1970, "
                                  f"at most 253402300799 (the end of the year 9999)")


def test_the_last_source_date_epoch_is_taken(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "253402300799")
    assert signing.build_time() == (253402300799, True)


# Issue 37: the core read past its names (a crash) making the denial proof of a name below a
# DNAME whose target is its own zone's apex, when the name's image fell below another name.
@pytest.mark.parametrize("denial, opt_out", [("nsec", False), ("nsec3", False),
                                             ("nsec3", True)])
def test_a_dname_to_its_own_apex_is_signed_and_built(denial, opt_out, tmp_path):
    built = build(signed_set(tmp_path, denial, opt_out, zone=dname_to_apex("example.com.")),
                  tmp_path / "out")
    assert built.returncode == 0, built.stderr
    assert "error" not in built.stderr and (tmp_path / "out" / "zonebake-server").exists()


def test_a_zone_with_errors_is_not_signed(tmp_path):
    """Signing read what the checks refuse: a zone without an SOA record crashed the core
    (found by tests/fuzz's core target)."""
    zone = "\n".join(line for line in ZONE.splitlines() if " SOA " not in line) + "\n"
    built = build(signed_set(tmp_path, "nsec3", zone=zone), tmp_path / "out")
    assert built.returncode == 1, built.stderr
    assert "example.com.zone:1: error: no SOA record at the zone apex example.com." in built.stderr
    assert "core failed" not in built.stderr and "Traceback" not in built.stderr
