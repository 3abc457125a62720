"""A hosting provider's zone set (tests/scale/gen.py) of 10,000 zones builds into one binary
that answers for every one of them. (The core reports a line of numbers per zone: at this
size they outgrow a pipe's buffer, which once hung the build.) The timed full-size runs are
tests/scale/report.py's, outside the suite."""

from __future__ import annotations

from pathlib import Path

import dns.flags
import dns.rcode
import dns.rdatatype
import pytest

from conftest import Server, build_set
from gen import write_zoneset


ZONES = 10_000


@pytest.fixture(scope="module")
def hoster(tmp_path_factory):
    work = tmp_path_factory.mktemp("hoster")
    config = write_zoneset(work / "zones", ZONES)
    server = Server(build_set(work / "out", "-q", "-c", str(config)))
    yield server
    server.stop()


def test_every_zone_answers(hoster):
    for i in range(ZONES):
        response = hoster.query(f"customer{i}.test.", "A")
        assert response.rcode() == dns.rcode.NOERROR
        assert response.flags & dns.flags.AA
        assert [rd.to_text() for rrset in response.answer for rd in rrset] == \
            [f"10.1.{i >> 8 & 255}.{i & 255}"]


@pytest.mark.parametrize("i", [0, 1, 4999, ZONES - 1])
def test_each_zone_keeps_its_own_data(hoster, i):
    www = hoster.query(f"www.customer{i}.test.", "A")
    assert [(r.name.to_text(), r.rdtype) for r in www.answer] == [
        (f"www.customer{i}.test.", dns.rdatatype.CNAME), (f"customer{i}.test.", dns.rdatatype.A)]
    mx = hoster.query(f"customer{i}.test.", "MX")
    assert {r.name.to_text() for r in mx.additional} == {f"mail.customer{i}.test."}
    missing = hoster.query(f"nosuch.customer{i}.test.", "A")
    assert missing.rcode() == dns.rcode.NXDOMAIN
    assert [r.name.to_text() for r in missing.authority] == [f"customer{i}.test."]
    outside = hoster.query(f"customer{ZONES}.test.", "A")
    assert outside.rcode() == dns.rcode.REFUSED
