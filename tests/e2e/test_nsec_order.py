"""With DO set, a name that does not exist in an NSEC zone gets the NSEC that covers it: the
responder finds it among its closest encloser's children by canonical order (RFC 4034 §6.1),
comparing the labels' first octets as one number. Here the children's labels are short and
long, prefixes of each other, hold octets 0 and 255, and end inside and past eight octets;
each name asked for falls between two of them, and the NSEC in the answer must cover it, by
dnspython's canonical ordering."""

from __future__ import annotations

import time

import dns.message
import dns.name
import dns.rcode
import dns.rdatatype
import pytest

from buildsigned import ZONE, build, signed_set
from conftest import Server

CHILDREN = ["a", "a0", "aa", "ab", "abcdefg", "abcdefgg", "abcdefgh", "abcdefgh0",
            "abcdefghi", "a\\000", "b", "m", "m-", "mm", "zz", "\\000", "\\255", "\\255\\255",
            "x\\255y", "x\\000y", "abcdefgh\\000"]
ASKED = ["a-", "a00", "a1", "aaa", "abc", "abcdefga", "abcdefgga", "abcdefgha", "abcdefgh1",
         "abcdefghj", "ab\\000", "a\\000\\000", "a\\001", "c", "\\001", "\\254", "\\255\\000",
         "\\255\\255\\255", "zzz", "y", "x\\128y", "x\\000z", "AB0", "ABCDEFGHA", "Mm0", "0",
         "abcdefgh\\000\\000"]

ORIGIN = dns.name.from_text("example.com.")
NSEC = dns.rdatatype.NSEC


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("nsec-order")
    zone = ZONE + "".join(f"{label} A 192.0.2.80\n" for label in CHILDREN)
    built = build(signed_set(directory, "nsec", zone=zone), directory / "out",
                  epoch=int(time.time()))
    assert built.returncode == 0, built.stderr
    running = Server(directory / "out" / "zonebake-server")
    yield running
    running.stop()


def covers(owner: dns.name.Name, following: dns.name.Name, name: dns.name.Name) -> bool:
    if owner < following:
        return owner < name < following
    return name > owner or name < following  # the last NSEC, back round to the apex


@pytest.mark.parametrize("label", ASKED)
def test_the_nsec_that_covers_the_name_is_found(server, label):
    name = dns.name.from_text(label, ORIGIN)
    response = server.send(dns.message.make_query(name, "A", want_dnssec=True))
    assert response.rcode() == dns.rcode.NXDOMAIN
    nsecs = [(rrset.name, rrset[0].next) for rrset in response.authority
             if rrset.rdtype == NSEC]
    covering = [(owner, following) for owner, following in nsecs
                if covers(owner, following, name)]
    assert len(covering) == 1, (name, nsecs)
