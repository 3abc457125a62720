"""Stage 1, quick path: read a zone file made only of plain one-line records.

dnspython's Reader takes some 50 µs a record, most of it in its character-at-a-time
tokenizer: minutes for a zone of millions of records. Zones that size come from generators
and are plain: one record a line, `$ORIGIN` and `$TTL`, no parentheses, escapes or
`$INCLUDE`/`$GENERATE`. This module reads such files by splitting lines, and builds the
common types' rdata directly; any other type's rdata still goes through dnspython.

It gives exactly the records the Reader would (tests/test_fastparse.py compares them on every
test zone). Whenever a file holds anything it does not handle, or anything it cannot read,
it returns None and the Reader reads the file instead; so errors are always the Reader's, with
the same messages and positions.
"""

from __future__ import annotations

import re
from typing import Callable

import dns.exception
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rdtypes.ANY.CNAME
import dns.rdtypes.ANY.MX
import dns.rdtypes.ANY.NS
import dns.rdtypes.ANY.PTR
import dns.rdtypes.ANY.TXT
import dns.rdtypes.IN.A
import dns.rdtypes.IN.AAAA
import dns.ttl

from .config import ZoneSource
from .names import from_labels

IN = dns.rdataclass.IN
T = dns.rdatatype
# After the type: one or more quoted strings without escapes, then perhaps a comment.
QUOTED = re.compile(r'((?:"[^"\\]*"\s*)+)(;.*)?')
STRING = re.compile(r'"([^"]*)"')
MAX_NAME = 255


class _NotPlain(Exception):
    """The file needs the Reader."""


def _name(text: str, origin: dns.name.Name) -> dns.name.Name:
    """A name as the Reader reads it: `@`, absolute, or relative to the current origin."""
    if text == "@":
        return origin
    if "\\" in text or "@" in text:
        raise _NotPlain
    if text == ".":
        return dns.name.root
    absolute = text.endswith(".")
    labels = tuple(label.encode("ascii") for label in (text[:-1] if absolute else text).split("."))
    labels += (b"",) if absolute else origin.labels
    # Empty labels inside, labels over 63 octets, names over 255: the Reader's errors.
    if any(len(label) > 63 or not label for label in labels[:-1]) or \
            sum(len(label) + 1 for label in labels) > MAX_NAME:
        raise _NotPlain
    return from_labels(labels)


class _Names:
    """Rdata names repeat (mail exchangers, name servers): read each text once per origin."""

    def __init__(self):
        self.known: dict[tuple[str, dns.name.Name], dns.name.Name] = {}

    def get(self, text: str, origin: dns.name.Name) -> dns.name.Name:
        key = (text, origin)
        name = self.known.get(key)
        if name is None:
            name = self.known[key] = _name(text, origin)
        return name


def _rdata(rdtype: int, fields: list[str], rest: str, origin: dns.name.Name,
           names: _Names) -> dns.rdata.Rdata:
    if rdtype == T.A and len(fields) == 1:
        return dns.rdtypes.IN.A.A(IN, rdtype, fields[0])
    if rdtype == T.AAAA and len(fields) == 1:
        return dns.rdtypes.IN.AAAA.AAAA(IN, rdtype, fields[0])
    if rdtype in (T.NS, T.CNAME, T.PTR) and len(fields) == 1:
        cls = {T.NS: dns.rdtypes.ANY.NS.NS, T.CNAME: dns.rdtypes.ANY.CNAME.CNAME,
               T.PTR: dns.rdtypes.ANY.PTR.PTR}[rdtype]
        return cls(IN, rdtype, names.get(fields[0], origin))
    if rdtype == T.MX and len(fields) == 2 and fields[0].isdigit():
        return dns.rdtypes.ANY.MX.MX(IN, rdtype, int(fields[0]), names.get(fields[1], origin))
    # Every other type, and unusual forms of these: dnspython reads the rdata text, as the
    # Reader would have.
    return dns.rdata.from_text(IN, rdtype, rest, origin, False, dns.name.root)


def _record(line: str, state: dict, names: _Names):
    """One record line: (owner, ttl, rdata)."""
    before, quote, after = line.partition('"')
    if quote and ";" not in before:
        quoted = QUOTED.fullmatch(quote + after)
        if quoted is None:
            raise _NotPlain
        tokens = before.split()
        strings = STRING.findall(quoted.group(1))
    else:
        tokens = line.partition(";")[0].split()
        strings = None
    if not tokens:
        return None
    origin = state["origin"]
    if line[0] in " \t":
        owner = state["last"]
        if owner is None:
            raise _NotPlain
    else:
        owner = state["last"] = _name(tokens.pop(0), origin)
    ttl = None
    for _ in range(2):  # TTL and class, in either order
        if tokens and tokens[0][0].isdigit():
            ttl = dns.ttl.from_text(tokens.pop(0))
        elif tokens and tokens[0].upper() == "IN":
            tokens.pop(0)
    if ttl is None:
        ttl = state["ttl"]
    if not tokens:
        raise _NotPlain
    rdtype = dns.rdatatype.from_text(tokens[0])
    fields = tokens[1:]
    if strings is not None and rdtype == T.TXT and not fields:
        rdata = dns.rdtypes.ANY.TXT.TXT(IN, rdtype, [s.encode("ascii") for s in strings])
    elif strings is not None:  # quoted strings in other types' data (CAA, HINFO...)
        rest = " ".join(fields) + " " + quote + after
        rdata = dns.rdata.from_text(IN, rdtype, rest, origin, False, dns.name.root)
    else:
        rdata = _rdata(rdtype, fields, " ".join(fields), origin, names)
    return owner, ttl, rdata


PlainRecord = tuple[dns.name.Name, int, dns.rdata.Rdata, int]  # owner, TTL, rdata, line


def parse_plain(source: ZoneSource, on_record: Callable[[], None]) -> list[PlainRecord] | None:
    """The file's records, or None if the Reader must read it (see the module's note)."""
    state: dict = {"origin": source.origin, "ttl": None, "last": None}
    names = _Names()
    records: list[PlainRecord] = []
    try:
        with open(source.path, encoding="ascii") as f:
            for number, line in _logical_lines(f):
                if line.startswith("$"):
                    _directive(line, state)
                    continue
                if state["ttl"] is None and line.partition(";")[0].strip():
                    return None  # the TTL rules before a $TTL are the Reader's
                record = _record(line, state, names)
                if record is not None:
                    records.append((*record, number))
                    on_record()
    except (_NotPlain, dns.exception.DNSException, ValueError, UnicodeError, OSError):
        return None
    return records


def _logical_lines(f):
    """(first line number, text) of each record: lines joined across parentheses, which only
    group (RFC 1035 §5.1), with comments dropped inside them."""
    lines = enumerate(f, 1)
    for number, line in lines:
        line = line.rstrip("\r\n")
        code = line.partition(";")[0]
        if "\\" in code:
            raise _NotPlain
        if "(" not in code and ")" not in code:
            yield number, line
            continue
        if '"' in line or code.count("(") != 1 or ")" in code.partition("(")[0]:
            raise _NotPlain
        parts = [code.replace("(", " ")]
        while ")" not in parts[-1]:
            _, more = next(lines, (0, None))
            if more is None or '"' in more or "(" in more or "\\" in more:
                raise _NotPlain
            parts.append(more.rstrip("\r\n").partition(";")[0])
        last, _, after = parts[-1].partition(")")
        if after.strip() or ")" in after:
            raise _NotPlain
        parts[-1] = last
        yield number, " ".join(parts)


def _directive(line: str, state: dict) -> None:
    tokens = line.partition(";")[0].split()
    if len(tokens) != 2:
        raise _NotPlain
    keyword = tokens[0].upper()
    if keyword == "$TTL":
        state["ttl"] = dns.ttl.from_text(tokens[1])
    elif keyword == "$ORIGIN":
        origin = _name(tokens[1], state["origin"])
        if not origin.is_absolute():
            raise _NotPlain
        state["origin"] = origin
    else:
        raise _NotPlain  # $INCLUDE, $GENERATE and the rest: the Reader's
