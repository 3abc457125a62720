"""Zones from a primary (issue 18): before a build compiles a zone that names a `primary`, ask
the primary for its SOA and, when its serial is newer than the file's (RFC 1982 arithmetic) or
the file is missing, transfer the zone (AXFR, RFC 5936, signed with the zone's TSIG key, RFC
8945) into a file beside it, FILE.axfr, which the build compiles. The transfer replaces FILE
once the build has succeeded; when it fails, FILE.axfr stays for a look at what the primary
sent (the messages name its lines) and FILE is still the last good zone.

A primary that cannot be reached, or a transfer that fails, is a warning: the build compiles
the last file, as a secondary serves its copy until the zone expires. With no file at all the
core then reports the zone's file as missing.
"""

from __future__ import annotations

import dataclasses
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Collection

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.tokenizer
import dns.tsig
import dns.zonefile

from .config import Primary, ZoneSetConfig, ZoneSource
from .errors import Diagnostic, Position
from .refreshed import Refreshed, Soa

STAGED_SUFFIX = ".axfr"
QUERY_TIMEOUT = 2.0  # seconds for each try of the SOA query; two tries
TRANSFER_TIMEOUT = 30.0  # seconds the primary may stay silent during a transfer
PARALLEL = 16  # primaries asked at once: a provider's set has thousands of such zones


class TransferFailed(Exception):
    """The primary could not be asked or did not give the zone; the message says why."""


def newer(serial: int, than: int) -> bool:
    """RFC 1982 §3.2: serial is greater than `than` in sequence space arithmetic."""
    return serial != than and (serial - than) % 2**32 < 2**31


class _FoundSoa(Exception):
    def __init__(self, soa: Soa):
        self.soa = soa


class _FirstSoa(dns.zonefile.RRsetsReaderTransaction):
    """Stops reading a zone file at its SOA record: the serial of a zone of a million names
    is on one of its first lines."""

    def _put_rdataset(self, name, rdataset):
        if rdataset.rdtype == dns.rdatatype.SOA:
            soa = rdataset[0]
            raise _FoundSoa(Soa(soa.serial, soa.refresh, soa.retry))
        super()._put_rdataset(name, rdataset)


class _FirstSoaManager(dns.zonefile.RRSetsReaderManager):
    def writer(self, replacement=False):
        return _FirstSoa(self, replacement, False)


def file_soa(path: Path, origin: dns.name.Name) -> Soa | None:
    """The SOA of the zone file at `path`; None when the file is missing or cannot be read as
    far as its SOA."""
    try:
        with open(path, encoding="utf-8", errors="replace") as text:
            manager = _FirstSoaManager(origin, False, dns.rdataclass.IN)
            with manager.writer() as txn:
                dns.zonefile.Reader(dns.tokenizer.Tokenizer(text, str(path)),
                                    dns.rdataclass.IN, txn, allow_include=True).read()
    except _FoundSoa as found:
        return found.soa
    except (OSError, dns.exception.DNSException, ValueError):
        return None
    return None


def _keyring(primary: Primary) -> dict:
    key = primary.tsig
    if key is None:
        return {}
    return {"keyring": dns.tsig.Key(key.name, key.secret, key.algorithm),
            "keyname": key.name, "keyalgorithm": key.algorithm}


def primary_soa(zone: ZoneSource) -> Soa:
    """The zone's SOA as its primary serves it (TSIG-signed when the zone has a key)."""
    primary = zone.primary
    tsig = _keyring(primary)
    for _ in range(2):
        query = dns.message.make_query(zone.origin, dns.rdatatype.SOA, use_edns=False)
        if tsig:
            query.use_tsig(tsig["keyring"], tsig["keyname"], algorithm=tsig["keyalgorithm"])
        try:
            response, _ = dns.query.udp_with_fallback(query, primary.address, QUERY_TIMEOUT,
                                                      primary.port)
        except dns.exception.Timeout:
            continue
        except (OSError, dns.exception.DNSException, EOFError, ValueError) as exc:
            raise TransferFailed(_why(exc)) from None
        rcode = response.rcode()
        if rcode != dns.rcode.NOERROR or not response.flags & dns.flags.AA:
            raise TransferFailed(f"it answers {dns.rcode.to_text(rcode)}"
                                 f"{'' if response.flags & dns.flags.AA else ', not authoritative'}"
                                 f" for the SOA of {zone.origin_text}")
        for rrset in response.answer:
            if rrset.rdtype == dns.rdatatype.SOA and rrset.name == zone.origin and rrset:
                return Soa(rrset[0].serial, rrset[0].refresh, rrset[0].retry)
        raise TransferFailed(f"its answer has no SOA for {zone.origin_text}")
    raise TransferFailed(f"no answer in {2 * QUERY_TIMEOUT:g} s")


# The primary's TSIG errors (RFC 8945 §5.2), as dnspython raises them.
_PEER_TSIG = {dns.tsig.PeerBadKey: "it does not know our TSIG key (BADKEY)",
              dns.tsig.PeerBadSignature: "it finds our TSIG signature bad (BADSIG): is the "
                                         "secret the same?",
              dns.tsig.PeerBadTime: "it finds our TSIG time wrong (BADTIME): are the clocks "
                                    "set?",
              dns.tsig.PeerBadTruncation: "it finds our TSIG MAC truncated (BADTRUNC)"}


def _why(exc: Exception) -> str:
    if type(exc) in _PEER_TSIG:
        return _PEER_TSIG[type(exc)]
    if isinstance(exc, dns.tsig.BadSignature):
        return "its TSIG signature does not verify with our key"
    if isinstance(exc, dns.message.UnknownTSIGKey):
        return "it signs with a TSIG key we do not have"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc) or type(exc).__name__
    return text.rstrip(".")


def transfer(zone: ZoneSource, into: Path) -> Soa:
    """AXFR the zone from its primary into the file `into` (written whole, then renamed in
    place): the SOA first, then every other record as the primary sent it, absolute names."""
    primary = zone.primary
    partial = into.with_name(into.name + ".partial")
    soa: Soa | None = None
    try:
        with open(partial, "w", encoding="utf-8") as out:
            out.write(f"; {zone.origin_text} transferred from {primary} at "
                      f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
            for message in dns.query.xfr(primary.address, zone.origin, port=primary.port,
                                         relativize=False, timeout=TRANSFER_TIMEOUT,
                                         **_keyring(primary)):
                for rrset in message.answer:
                    if rrset.rdtype == dns.rdatatype.SOA:
                        if soa is not None:
                            continue  # the closing SOA (RFC 5936 §2.2)
                        soa = Soa(rrset[0].serial, rrset[0].refresh, rrset[0].retry)
                    out.write(rrset.to_text())
                    out.write("\n")
    except (OSError, dns.exception.DNSException, EOFError, ValueError) as exc:
        partial.unlink(missing_ok=True)
        raise TransferFailed(f"the transfer failed: {_why(exc)}") from None
    if soa is None:
        partial.unlink(missing_ok=True)
        raise TransferFailed("the transfer gave no SOA")
    os.replace(partial, into)
    return soa


def staged_path(zone: ZoneSource) -> Path:
    return zone.path.with_name(zone.path.name + STAGED_SUFFIX)


def _refresh_one(zone: ZoneSource, staging: Path | None
                 ) -> tuple[ZoneSource, Soa | None, Path | None, Diagnostic | None]:
    """Ask one zone's primary; the zone to compile, the SOA timers, the staged file (if a
    transfer was made) and a warning (if the primary failed)."""
    have = file_soa(zone.path, zone.origin)
    try:
        served = primary_soa(zone)
        if have is not None and not newer(served.serial, have.serial):
            return zone, served, None, None
        into = staged_path(zone) if staging is None else staging / staged_path(zone).name
        soa = transfer(zone, into)
    except TransferFailed as exc:
        last = f"the last file ({zone.display}) is used" if have is not None else \
            f"and there is no earlier file ({zone.display})"
        warning = Diagnostic(Position(zone.display, 0), "warning",
                             f"{zone.origin_text} from primary {zone.primary}: {exc}; {last}")
        return zone, None, None, warning
    return dataclasses.replace(zone, path=into, display=str(into)), soa, into, None


def refresh(config: ZoneSetConfig, only: Collection[str] | None = None,
            staging: Path | None = None) -> Refreshed:
    """Ask the primaries of the set's zones (of those whose origin text is in `only`, when
    given) for newer serials and transfer what changed: into FILE.axfr beside each FILE, or
    into `staging` (a directory) when given."""
    asked = [i for i, zone in enumerate(config.zones) if zone.primary is not None
             and (only is None or zone.origin_text in only)]
    result = Refreshed(config)
    if not asked:
        return result
    zones = list(config.zones)
    with ThreadPoolExecutor(max_workers=min(PARALLEL, len(asked))) as pool:
        outcomes = pool.map(lambda i: _refresh_one(config.zones[i], staging), asked)
        for i, (zone, soa, staged, warning) in zip(asked, outcomes):
            zones[i] = zone
            result.timers[zone.origin_text] = soa
            if staged is not None:
                result.staged[zone.origin_text] = (staged, config.zones[i].path)
            if warning is not None:
                result.warnings.append(warning)
    result.config = dataclasses.replace(config, zones=tuple(zones))
    return result
