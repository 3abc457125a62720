"""RFC 1035's experimental mail types, which dnspython reads only in RFC 3597's generic form
(`\\# 4 ...`) and which zone files write as names: MD, MF, MB, MG and MR (one domain name,
RFC 1035 §3.3.1-3.3.8) and MINFO (two, §3.3.7). BIND, Knot and NSD read them; with these the
zone files that hold them (PowerDNS's regression zones do) are read here too when the fast
reader leaves a file to dnspython.

They are added through dnspython's own extension point, dns.rdata.register_type, which takes
types it has no class for; nothing of dnspython's is changed.
"""

from __future__ import annotations

import dns.immutable
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.ANY.RP
import dns.rdtypes.nsbase


@dns.immutable.immutable
class OneName(dns.rdtypes.nsbase.NSBase):
    """MD, MF, MB, MG, MR: a domain name, as NS holds one."""


@dns.immutable.immutable
class MINFO(dns.rdtypes.ANY.RP.RP):
    """RMAILBX and EMAILBX: two domain names, as RP's (RFC 1183 §2.2) are written."""


def register() -> None:
    """Once per process; a type dnspython comes to know by itself is left to it."""
    for name, implementation in (("MD", OneName), ("MF", OneName), ("MB", OneName),
                                 ("MG", OneName), ("MR", OneName), ("MINFO", MINFO)):
        rdtype = dns.rdatatype.from_text(name)
        if dns.rdata.get_rdata_class(dns.rdataclass.ANY, rdtype) is dns.rdata.GenericRdata:
            dns.rdata.register_type(implementation, rdtype, name, rdclass=dns.rdataclass.ANY)
