"""DNSSEC key pairs (compiler/dnssec/keys.py): `zonebake keygen` writes BIND's format, which
BIND's tools read; keys from BIND's dnssec-keygen are read back; `zonebake ds` prints what
dnssec-dsfromkey prints; a broken pair is refused with the file named."""

from __future__ import annotations

import base64
import re
import stat
import subprocess
from pathlib import Path

import dns.dnssec
import dns.name
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import run_zonebake as zonebake
from zonebake.dnssec.keys import generate, load
from zonebake.errors import UsageError

ORIGIN = dns.name.from_text("example.")


def bind_ds(key_file: Path) -> str:
    out = subprocess.run(["dnssec-dsfromkey", "-2", str(key_file)], capture_output=True,
                         text=True, check=True, timeout=30).stdout
    return out.strip().upper()


def signs(pair) -> bool:
    """The private key signs what the public one verifies."""
    keys = dns.rrset.from_rdata(ORIGIN, 3600, pair.dnskey)
    sig = dns.dnssec.sign(keys, pair.private, ORIGIN, pair.dnskey, lifetime=3600)
    dns.dnssec.validate(keys, dns.rrset.from_rdata(ORIGIN, 3600, sig), {ORIGIN: keys})
    return True


@pytest.mark.parametrize("algorithm,number", [("ed25519", 15), ("ecdsap256sha256", 13)])
def test_keygen_writes_a_pair_bind_reads(tmp_path, algorithm, number):
    made = zonebake("keygen", "example.", "--algorithm", algorithm, "--ksk", "-d", str(tmp_path))
    assert made.returncode == 0, made.stderr
    base = made.stdout.strip()
    assert re.fullmatch(rf"Kexample\.\+0{number}\+\d{{5}}", base)
    key, private = tmp_path / f"{base}.key", tmp_path / f"{base}.private"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_text().startswith(f"Private-key-format: v1.3\nAlgorithm: {number} ")
    (pair,) = load(ORIGIN, tmp_path)
    assert pair.ksk and pair.dnskey.flags == 257 and pair.dnskey.algorithm == number
    assert base.endswith(f"+{pair.tag:05d}")
    assert signs(pair)
    shown = zonebake("ds", "example.", "--keys", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip().upper() == bind_ds(key)


def test_a_zone_signing_key_is_not_a_ksk(tmp_path):
    assert zonebake("keygen", "example.", "--algorithm", "ed25519", "-d",
                    str(tmp_path)).returncode == 0
    (pair,) = load(ORIGIN, tmp_path)
    assert pair.dnskey.flags == 256 and not pair.ksk


@pytest.mark.parametrize("algorithm", ["ED25519", "ECDSAP256SHA256"])
def test_keys_from_dnssec_keygen_are_read(tmp_path, algorithm):
    def keygen(*flags):
        out = subprocess.run(["dnssec-keygen", "-q", "-a", algorithm, *flags, "-K",
                              str(tmp_path), "example."], capture_output=True, text=True,
                             check=True, timeout=60)
        return tmp_path / (out.stdout.strip() + ".key")
    ksk, zsk = keygen("-f", "KSK"), keygen()
    pairs = load(ORIGIN, tmp_path)
    assert sorted(p.ksk for p in pairs) == [False, True]
    assert all(signs(p) for p in pairs)
    # The DS goes to the KSK alone, as dnssec-dsfromkey makes it.
    shown = zonebake("ds", "example.", "--keys", str(tmp_path))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip().upper() == bind_ds(ksk)
    assert zsk.exists()


def test_an_ecdsa_key_bind_wrote_without_its_leading_zero_is_read(tmp_path, monkeypatch):
    """BIND writes an ECDSA private key as a number, its leading zero octets left out: one
    dnssec-keygen key in 256 has 31 octets, and they are read as the same key."""
    scalar = int.from_bytes(b"\0" + bytes(range(1, 32)), "big")
    monkeypatch.setattr(ec, "generate_private_key",
                        lambda curve: ec.derive_private_key(scalar, curve))
    pair = generate(ORIGIN, "ecdsap256sha256", True, tmp_path)
    private = pair.path.with_suffix(".private")
    short = base64.b64encode(scalar.to_bytes(31, "big")).decode()
    private.write_text(re.sub(r"PrivateKey: .*", f"PrivateKey: {short}", private.read_text()))
    (read,) = load(ORIGIN, tmp_path)
    assert read.private.private_numbers().private_value == scalar
    assert read.dnskey == pair.dnskey and signs(read)


def test_without_a_ksk_every_key_gets_a_ds(tmp_path):
    for _ in range(2):
        assert zonebake("keygen", "example.", "-d", str(tmp_path)).returncode == 0
    shown = zonebake("ds", "example.", "--keys", str(tmp_path))
    assert shown.returncode == 0
    assert len(shown.stdout.splitlines()) == 2


def test_keys_of_other_zones_are_left_alone(tmp_path):
    assert zonebake("keygen", "other.example.", "-d", str(tmp_path)).returncode == 0
    assert load(ORIGIN, tmp_path) == []
    shown = zonebake("ds", "example.", "--keys", str(tmp_path))
    assert shown.returncode == 2 and not shown.stdout
    assert shown.stderr == f"zonebake: no keys for example. in {tmp_path}\n"


def pair_files(tmp_path: Path, *flags: str) -> tuple[Path, Path]:
    base = zonebake("keygen", "example.", *flags, "-d", str(tmp_path)).stdout.strip()
    return tmp_path / f"{base}.key", tmp_path / f"{base}.private"


def refused(tmp_path: Path) -> str:
    with pytest.raises(UsageError) as caught:
        load(ORIGIN, tmp_path)
    shown = zonebake("ds", "example.", "--keys", str(tmp_path))
    assert shown.returncode == 2 and not shown.stdout
    assert shown.stderr == f"zonebake: {caught.value}\n"
    return str(caught.value)


def test_a_private_key_of_another_pair_is_refused(tmp_path):
    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    key, private = pair_files(mine)
    _, other_private = pair_files(other)
    private.write_text(other_private.read_text())
    assert refused(mine) == f"{private}: its private key is not the one of {key.name}"


def test_a_missing_private_half_is_refused(tmp_path):
    key, private = pair_files(tmp_path)
    private.unlink()
    assert refused(tmp_path) == f"{private}: missing (the private half of {key.name})"


def test_a_damaged_private_key_is_refused(tmp_path):
    _, private = pair_files(tmp_path)
    private.write_text(re.sub(r"PrivateKey: .*", "PrivateKey: not*base64", private.read_text()))
    assert refused(tmp_path) == f"{private}: no 32-octet PrivateKey in base64"


def test_an_algorithm_zonebake_does_not_sign_with_is_refused(tmp_path):
    out = subprocess.run(["dnssec-keygen", "-q", "-a", "RSASHA256", "-b", "2048", "-K",
                          str(tmp_path), "example."], capture_output=True, text=True,
                         check=True, timeout=120)
    key = tmp_path / (out.stdout.strip() + ".key")
    assert refused(tmp_path) == (f"{key}: algorithm 8 is not one zonebake signs with "
                                 f"(Ed25519 15, ECDSAP256SHA256 13)")


def test_keygen_says_what_is_wrong(tmp_path):
    bad = zonebake("keygen", "exa..mple.", "-d", str(tmp_path))
    assert bad.returncode == 2 and "zonebake: exa..mple.:" in bad.stderr
    missing = zonebake("keygen", "example.", "-d", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr.startswith(f"zonebake: {tmp_path / 'nowhere'}")
    assert "Traceback" not in bad.stderr + missing.stderr


@pytest.mark.parametrize("name,reason", [("a-file", ""), ("x" * 300, ": File name too long"),
                                         ("missing", "")])
def test_a_keys_directory_that_is_not_one_is_refused_clearly(tmp_path, name, reason):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(UsageError) as refused:
        load(dns.name.from_text("example.com."), tmp_path / name)
    assert str(refused.value) == f"{tmp_path / name}: not a directory of keys{reason}"
