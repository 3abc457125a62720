"""The signed zone `zonebake build --write-signed` writes (compiler/core/dnssec/signedtext.c):
every record of every type read back as the zone holds it, presentation formats where the
writer has them and RFC 3597's generic form elsewhere, names escaped as RFC 1035 §5.1 reads
them, owners in canonical order (RFC 4034 §6.1); and only once the build succeeded. The
peers' verifiers check the same zone's signatures over the records as written
(test_signing_builds.py)."""

from __future__ import annotations

import dns.name
import dns.rdatatype
import dns.zone

from buildsigned import EVERY_FORM, ORIGIN, ZONE, build, signed_set

def test_the_written_zone_reads_back_record_for_record(tmp_path):
    toml = signed_set(tmp_path, "nsec3", zone=ZONE + EVERY_FORM)
    written = tmp_path / "signed.zone"
    built = build(toml, tmp_path / "out", "--write-signed", str(written))
    assert built.returncode == 0, built.stderr
    text = written.read_text(encoding="latin-1")
    assert "\\# 3 ABCDEF" in text and "\\# 0\n" in text  # the private types, generic
    assert "svc.example.com.\t3600\tIN\tSVCB\t\\# " in text  # no SVCB presentation here
    assert 'IN\tCAA\t0 issue "ca.example.net; account=\\"1\\""' in text
    assert "a\\.dot.example.com.\t3600\tIN\tA\t192.0.2.11" in text
    assert "a\\032space.example.com." in text and "paren\\(.example.com." in text
    assert "IN\tNSEC3PARAM\t1 0 0 -\n" in text
    zone = dns.zone.from_file(str(written), ORIGIN, relativize=False)
    source = dns.zone.from_text(ZONE + EVERY_FORM, ORIGIN, relativize=False)
    dnssec = {dns.rdatatype.RRSIG, dns.rdatatype.NSEC3, dns.rdatatype.NSEC3PARAM,
              dns.rdatatype.DNSKEY, dns.rdatatype.CDS, dns.rdatatype.CDNSKEY}
    served = {(name, ttl, rdata) for name, ttl, rdata in zone.iterate_rdatas()
              if rdata.rdtype not in dnssec}
    assert served == set(source.iterate_rdatas())
    signed = {rdata.covers() for _, _, rdata in zone.iterate_rdatas()
              if rdata.rdtype == dns.rdatatype.RRSIG}
    assert {dns.rdatatype.TXT, dns.rdatatype.SVCB, dns.rdatatype.NSEC3,
            dns.rdatatype.from_text("TYPE65280")} <= signed
    # Owners in canonical order: each name's records together, the names ascending.
    owners = [dns.name.from_text(line.split("\t")[0]) for line in text.splitlines()]
    runs = [owner for k, owner in enumerate(owners) if k == 0 or owners[k - 1] != owner]
    assert len(runs) == len(set(runs)) and runs == sorted(runs)


def test_a_build_that_fails_leaves_no_signed_zone(tmp_path):
    toml = signed_set(tmp_path, "nsec3", zone=ZONE + "bad CNAME www\nbad A 192.0.2.1\n")
    written = tmp_path / "signed.zone"
    written.write_text("the last one\n")
    built = build(toml, tmp_path / "out", "--write-signed", str(written))
    assert built.returncode == 1 and "CNAME" in built.stderr, built.stderr
    assert written.read_text() == "the last one\n"
    assert sorted(p.name for p in tmp_path.iterdir() if "signed" in p.name) == ["signed.zone"]
