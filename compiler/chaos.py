"""The CH-class TXT answers that name the server (id.server, hostname.bind) and its version
(version.bind, version.server), serialized once like every other answer: they are fixed per
build, so the responder only looks them up.

What they look like follows NSD and Knot, checked on the wire (NSD 4, Knot 3.2): one TXT record
in class CH, owner the question, TTL 0, AA clear (neither server is authoritative for a CH
zone), NOERROR. A name whose text is not configured is REFUSED, as any other CH question is:
Knot and NSD both say REFUSED for a hidden version (not NXDOMAIN: that would claim knowledge of
a CH zone the server does not serve). QTYPE ANY gets the TXT (as NSD; Knot says REFUSED), any
other QTYPE is REFUSED (both).
"""

from __future__ import annotations

import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdataset
import dns.rdatatype
from dns.rdtypes.ANY.TXT import TXT

from .answers import QNAME, Answer, Entry
from .config import ServerDefaults
from .wire import Body, key_of, serialize

IDENTITY_NAMES = ("id.server.", "hostname.bind.")
VERSION_NAMES = ("version.bind.", "version.server.")


def chaos_answers(server: ServerDefaults) -> list[tuple[bytes, Body]]:
    """(lowercased wire name, answer to its TXT and ANY questions), for the configured ones."""
    out = []
    for names, text in ((IDENTITY_NAMES, server.identity), (VERSION_NAMES, server.version)):
        if not text:
            continue
        for name in names:
            owner = dns.name.from_text(name)
            rdataset = dns.rdataset.Rdataset(dns.rdataclass.CH, dns.rdatatype.TXT, ttl=0)
            rdataset.add(TXT(dns.rdataclass.CH, dns.rdatatype.TXT, [text.encode()]))
            answer = Answer(dns.rcode.NOERROR, aa=False, base=owner,
                            answer=(Entry(QNAME, rdataset),))
            out.append((key_of(owner), serialize(answer)))
    return out
