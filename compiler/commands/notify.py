"""How `zonebake follow` answers a NOTIFY (RFC 1996), as a secondary does: it decides whether
the message may make it ask a primary for a zone, and what goes back.

- Accepted only for a zone of the set that has a `primary`, from that primary's address (RFC
  1996 §3.10; any source port), signed with the zone's TSIG key when it has one. The answer
  is the NOTIFY's header and question with QR and AA set, NOERROR, signed with the same key
  (§4.7, RFC 8945 §5.3).
- A zone the set does not take from a primary: NOTAUTH, as BIND and Knot answer.
- Another source, or no signature where the zone has a key, or a key other than the zone's:
  REFUSED.
- A signature that fails (unknown key, bad MAC, time out of the fudge): NOTAUTH with the TSIG
  error, unsigned (RFC 8945 §5.2; see _bad_signature).
- Not a NOTIFY: NOTIMP; a NOTIFY without one SOA question in class IN: FORMERR; a response, or
  bytes that are no DNS message: nothing (RFC 1035 §7.3).
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.ANY.TSIG
import dns.tsig

from ..config import ZoneSetConfig, ZoneSource

HEADER = 12
# RFC 8945 §5.2 (16 is BADVERS too, in an OPT record: dnspython's text says that).
TSIG_ERRORS = {dns.rcode.BADSIG: "BADSIG", dns.rcode.BADKEY: "BADKEY",
               dns.rcode.BADTIME: "BADTIME"}


@dataclass(frozen=True)
class Verdict:
    reply: bytes | None  # what to send back; None: nothing
    zone: ZoneSource | None  # the zone to ask its primary about; None: nothing to do
    says: str  # for the log: what the message was and what became of it


class Notifies:
    """The rules for one zone set."""

    def __init__(self, config: ZoneSetConfig):
        self.zones = {zone.origin: zone for zone in config.zones if zone.primary is not None}
        self.keyring = {zone.primary.tsig.name:
                        dns.tsig.Key(zone.primary.tsig.name, zone.primary.tsig.secret,
                                     zone.primary.tsig.algorithm)
                        for zone in self.zones.values() if zone.primary.tsig is not None}

    def answer(self, wire: bytes, source: str) -> Verdict:
        if len(wire) < HEADER or wire[2] & 0x80:
            return Verdict(None, None, f"from {source}: not a query; dropped")
        try:
            # First unchecked, to have the header, the question and the TSIG record to answer
            # with whatever the signature turns out to be.
            message = dns.message.from_wire(wire, keyring=False)
        except dns.exception.DNSException as exc:
            return Verdict(_header_only(wire, dns.rcode.FORMERR), None,
                           f"from {source}: malformed ({exc}); FORMERR")
        if message.opcode() != dns.opcode.NOTIFY:
            return Verdict(_header_only(wire, dns.rcode.NOTIMP), None,
                           f"from {source}: opcode {dns.opcode.to_text(message.opcode())}; "
                           f"NOTIMP")
        if len(message.question) != 1 or message.question[0].rdtype != dns.rdatatype.SOA \
                or message.question[0].rdclass != dns.rdataclass.IN:
            return Verdict(_reply(message, dns.rcode.FORMERR), None,
                           f"from {source}: a NOTIFY without one IN SOA question; FORMERR")
        origin = message.question[0].name
        about = f"NOTIFY for {origin} from {source}"
        signed = message.tsig is not None
        if signed:
            try:
                message = dns.message.from_wire(wire, keyring=self.keyring)
            except dns.message.UnknownTSIGKey:
                return self._bad_signature(message, dns.rcode.BADKEY, about)
            except dns.tsig.BadTime:
                return self._bad_signature(message, dns.rcode.BADTIME, about)
            except (dns.tsig.BadSignature, dns.tsig.BadAlgorithm, dns.tsig.PeerError,
                    dns.exception.DNSException):
                return self._bad_signature(message, dns.rcode.BADSIG, about)
        zone = self.zones.get(origin)
        if zone is None:
            return Verdict(_reply(message, dns.rcode.NOTAUTH), None,
                           f"{about}: not a zone taken from a primary; NOTAUTH")
        if source.rsplit("#", 1)[0] != zone.primary.address:
            return Verdict(_reply(message, dns.rcode.REFUSED), None,
                           f"{about}: not its primary {zone.primary}; REFUSED")
        key = zone.primary.tsig
        if key is not None and (not signed or message.keyname != key.name):
            return Verdict(_reply(message, dns.rcode.REFUSED), None,
                           f"{about}: not signed with its key {key.name}; REFUSED")
        serial = [rrset[0].serial for rrset in message.answer
                  if rrset.rdtype == dns.rdatatype.SOA and rrset.name == origin and rrset]
        return Verdict(_reply(message, dns.rcode.NOERROR), zone,
                       f"{about}{f' (serial {serial[0]})' if serial else ''}: accepted")

    def _bad_signature(self, message: dns.message.Message, error: int, about: str) -> Verdict:
        """NOTAUTH with a TSIG record that carries the error and no MAC (RFC 8945 §5.3.2):
        the request's Time Signed, and for BADTIME our time in Other Data (§5.2.3). §5.3.2
        would have a BADTIME answer signed; dnspython checks the time before the MAC, so
        this one is not (the primary logs the BADTIME either way)."""
        tsig = message.tsig[0]
        record = dns.rdtypes.ANY.TSIG.TSIG(
            dns.rdataclass.ANY, dns.rdatatype.TSIG, tsig.algorithm,
            tsig.time_signed, tsig.fudge,
            b"", message.id, error,
            struct.pack("!Q", int(time.time()))[2:] if error == dns.rcode.BADTIME else b"")
        reply = bytearray(_reply(message, dns.rcode.NOTAUTH))
        reply[10:12] = struct.pack("!H", struct.unpack("!H", reply[10:12])[0] + 1)
        rdata = record.to_wire()
        reply += message.tsig.name.to_wire() + struct.pack("!HHIH", dns.rdatatype.TSIG,
                                                          dns.rdataclass.ANY, 0, len(rdata))
        reply += rdata
        return Verdict(bytes(reply), None,
                       f"{about}: TSIG {TSIG_ERRORS[error]} (key {message.tsig.name}); "
                       f"NOTAUTH")


def _reply(message: dns.message.Message, rcode: int) -> bytes:
    """The answer to a NOTIFY: its question, QR and AA, `rcode`; signed when it was signed
    with a key of ours and verified (dnspython's make_response keeps the key)."""
    response = dns.message.make_response(message)
    response.flags |= dns.flags.AA
    response.flags &= ~dns.flags.RD
    response.set_rcode(rcode)
    return response.to_wire()


def _header_only(wire: bytes, rcode: int) -> bytes:
    """A header with the query's ID and opcode, QR set and `rcode`: for what cannot be
    answered with its question."""
    flags = struct.unpack("!H", wire[2:4])[0]
    flags = 0x8000 | (flags & 0x7800) | rcode
    return wire[:2] + struct.pack("!HHHHH", flags, 0, 0, 0, 0)
