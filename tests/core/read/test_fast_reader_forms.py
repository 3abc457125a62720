"""The fast reader's record forms held against dnspython's reading of the same zone: each
record here is read by the fast reader (it does not decline: hand_over=False would raise),
and the core makes the same zonedata.bin, or says the same words, either way. Wrong input
is declined and dnspython's message given, the same as when dnspython reads it all."""

from __future__ import annotations

import pytest

from conftest import TESTS, bake_outcome, load_toml_text
from zonebake.core import run as core
from zonebake.config import load_toml
from zonebake.errors import CompileError

HEAD = "$TTL 1h\n@ SOA ns1 hostmaster 1 2h 15M 2w 1h\n@ NS ns1\nns1 A 192.0.2.1\n"

KEY = "mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+ KkxLbxILfDLUT0rAK9iUzy1L53eKGQ=="
SHA256 = "3b6ba1b2a5e4bcbe0c8a3a0d4b2f0a8a3bc2e7e9f1d3a5b7c9e1f3a5b7c9e1f3"
SHA384 = "0123456789abcdef" * 6

READ = [
    'spf SPF "v=spf1 mx -all"', "spf SPF v=spf1",
    'host HINFO "PC-Intel" "Linux 6.1"', "host HINFO PC Linux", 'host HINFO PC "Linux 6"',
    f"host SSHFP 4 2 {SHA256}", f"host SSHFP 1 1 {SHA256[:20]} {SHA256[20:40]}",
    f"_443._tcp TLSA 3 1 1 {SHA256}", f"_443._tcp SMIMEA 3 1 1 {SHA256}",
    f"sub CDS 12345 13 2 {SHA256}", f"sub DS 12345 13 2 ( {SHA256[:32]}\n {SHA256[32:]} )",
    f"keys DNSKEY 257 3 13 {KEY}", f"keys CDNSKEY 256 3 13 ( {KEY} ) ; a ZSK",
    "keys DNSKEY 256 3 8 AwEAAQ==", "keys DNSKEY 256 3 8 AwEAAa8=",
    "@ NSEC3PARAM 1 0 0 -", "@ NSEC3PARAM 1 0 10 aabbccdd",
    f"@ ZONEMD 2026112401 1 1 {SHA384}", f"@ ZONEMD 1 1 240 {SHA256[:24]}",
    "generic TYPE65400 \\# 4 0a000001", "generic TYPE65400 \\# 0", "generic A \\# 4 C0000263",
    "generic AAAA \\# 16 20010db8000000000000000000000001", "generic TYPE1 192.0.2.9",
    'dkim TXT ( "v=DKIM1; k=rsa; "\n  "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQ" ) ; split',
    'dkim TXT ( "a(b" ; not a parenthesis\n "c)d" )',
    'utf8 TXT "café ☕"', 'utf8 TXT "caf\\195\\169"', "plain A 192.0.2.8 ; commentaire ☕",
    'quoted TXT "semi;colon" "paren(" ; and a comment',
    'enum NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:info@example.com!" .',
    "enum NAPTR 100 20 S SIP+D2U \"\" _sip._udp", "svc HTTPS 0 www", "svc HTTPS 0 Www.Example.NET.",
    'svc HTTPS 1 . alpn="h2,h3" ipv4hint=192.0.2.1', "svc SVCB 2 www port=8443 mandatory=port",
    "www A 192.0.2.80", "www AAAA 2001:db8::80", "svc HTTPS 3 ns1 alpn=h3",
    "a\\.b A 192.0.2.3", "\\065\\066 TXT x\\ y", "mx MX 10 mail\\.host", "x\\@y A 192.0.2.4",
]

DECLINED = [
    f"host SSHFP 4 2 {SHA256[:-1]}", "host SSHFP 4 2 xyz", "host SSHFP 4 2",
    f"_443._tcp TLSA 3 1 {SHA256}", f"sub CDS 12345 13 2 {SHA256[:-2]}",
    "keys DNSKEY 256 3 8 AwEAAQ=", "keys DNSKEY 256 3 8 AwE*AQ==", "keys DNSKEY 256 3 8 AwEA=AQ==",
    f"keys DNSKEY 256 3 ECDSAP256SHA256 {KEY}", "keys DNSKEY 70000 3 8 AwEAAQ==",
    "@ NSEC3PARAM 1 0 0 abc", "@ NSEC3PARAM 1 0 0", f"@ ZONEMD 1 0 1 {SHA384}",
    f"@ ZONEMD 1 1 1 {SHA256}", "@ ZONEMD 1 1 240 00", "generic TYPE65400 \\# 4 0a00",
    "generic A \\# 3 0a0000", "generic TYPE65400 0a000001", "generic MX \\# 4 000a0000",
    "generic TYPE99999 \\# 0", "host HINFO one", 'utf8 TXT "open', "bücher A 192.0.2.2",
    "a\\1 A 192.0.2.1", "a\\256 A 192.0.2.1", "a@b A 192.0.2.1", f"{'a' * 64} A 192.0.2.1",
    "mx MX 10 a\\256", "svc HTTPS 1 . docpath=a,b", 'svc HTTPS 1 . alpn "h2"',
]

# Signed zones are refused, by the same words, whichever reader reads them; the fast reader
# reads their records without declining.
SIG = "aGVsbG8gd29ybGQ="
SIGNED = [
    f"@ RRSIG SOA 13 2 3600 20261201000000 20261101000000 12345 @ {SIG}",
    "@ NSEC ns1 A NS SOA RRSIG NSEC", "abc NSEC3 1 1 10 aabb 0123456789ABCDEFGHIJKLMNOPQRSTUV A",
]


def outcome_both_ways(record: str, tmp_path) -> tuple:
    zone = tmp_path / "example.test.zone"
    zone.write_text(HEAD + record + "\n", encoding="utf-8")
    config = load_toml_text(tmp_path, zone)
    fast = bake_outcome(config, tmp_path / "fast.bin")
    assert fast == bake_outcome(config, tmp_path / "dnspython.bin", dnspython_reads=True)
    return config, fast


@pytest.mark.parametrize("record", READ)
def test_the_fast_reader_reads_a_form_as_dnspython_does(record, tmp_path):
    config, fast = outcome_both_ways(record, tmp_path)
    assert fast[0] == "baked", fast[1]
    core.bake(config, tmp_path / "plain.bin", hand_over=False)  # read without declining


@pytest.mark.parametrize("record,message", list(zip(SIGNED, [
    "the zone example.test. holds RRSIG records, but its apex has no DNSKEY zone key",
    "has no NSEC record: the chain must pass through every name that holds data",
    "its owner must be a hash in base32hex right below the apex"])))
def test_a_broken_signed_zone_is_refused_either_way(record, message, tmp_path):
    config, fast = outcome_both_ways(record, tmp_path)
    assert fast[0] == "refused" and any(message in d for d in fast[1]), fast
    with pytest.raises(CompileError):
        core.bake(config, tmp_path / "plain.bin", hand_over=False)


@pytest.mark.parametrize("name", ["nsec", "nsec3", "nsec3-optout", "ldns-nsec", "ldns-nsec3"])
def test_a_zone_as_a_signer_wrote_it_is_read_fast_as_dnspython_reads_it(name, tmp_path):
    """dnssec-signzone's and ldns-signzone's output (tests/zones/signed/) is read without
    declining, into the same blob as from dnspython's reading."""
    zone = TESTS / "zones" / "signed" / f"example.{name}.zone"
    config = tmp_path / "zonebake.toml"
    config.write_text(f'[[zone]]\norigin = "example."\nfile = "{zone}"\n')
    fast = bake_outcome(load_toml(config), tmp_path / "fast.bin")
    assert fast[0] == "baked", fast
    assert fast == bake_outcome(load_toml(config), tmp_path / "slow.bin", dnspython_reads=True)
    core.bake(load_toml(config), tmp_path / "plain.bin", hand_over=False)


def test_records_before_ttl_get_dnspythons_ttls(tmp_path):
    """No $TTL: the SOA's MINIMUM, then the last TTL given (dnspython's Reader)."""
    zone = tmp_path / "example.test.zone"
    zone.write_text("@ SOA ns1 hostmaster 1 2h 15M 2w 1h\n@ NS ns1\nns1 300 A 192.0.2.1\n"
                    "www A 192.0.2.2\n$TTL 60\nmail A 192.0.2.3\n", encoding="utf-8")
    config = load_toml_text(tmp_path, zone)
    fast = bake_outcome(config, tmp_path / "fast.bin")
    assert fast == bake_outcome(config, tmp_path / "dnspython.bin", dnspython_reads=True)
    assert fast[0] == "baked", fast[1]
    core.bake(config, tmp_path / "plain.bin", hand_over=False)


@pytest.mark.parametrize("record", DECLINED)
def test_a_form_the_fast_reader_declines_gets_dnspythons_word(record, tmp_path):
    config, _ = outcome_both_ways(record, tmp_path)
    with pytest.raises(core.Unreadable):
        core.bake(config, tmp_path / "plain.bin", hand_over=False)


def test_the_hand_kept_zone_is_read_without_declining(tmp_path):
    """tests/differential's hand-kept zone, which Knot answers from too, holds every form the
    fast reader reads: none of it goes to dnspython."""
    zone = TESTS / "differential" / "zones" / "handkept" / "example.zone"
    config = tmp_path / "zonebake.toml"
    config.write_text(f'[[zone]]\norigin = "example."\nfile = "{zone}"\n')
    baked = core.bake(load_toml(config), tmp_path / "zonedata.bin", hand_over=False)
    assert baked.warnings == ()
