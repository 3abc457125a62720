"""Zone files the fast reader does not read, read by dnspython and handed to the core.

dnspython reads every form of zone file ($GENERATE, rare types, RFC 3597 data, escapes) and
names every syntax error with its file and line. What it read goes to the core in wire form
(the file format is in compiler/core/read/records.c), so that from there on every record is
checked and compiled by the same code, whichever reader read it.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Callable, Iterator

from ..config import ZoneSource
from .zonefile import parse_zone

MAGIC = b"ZBREC1\0\0"


def write_records(source: ZoneSource, path: Path,
                  on_record: Callable[[], None] = lambda: None) -> None:
    """Read the zone file with dnspython and write its records to `path`; raise CompileError
    (with the file and line) when dnspython cannot read it. `on_record` hears of each record
    read (progress reports)."""
    parsed = parse_zone(source, on_record)
    files: dict[str, int] = {}
    out = [MAGIC]
    for record in parsed.records:
        file = files.get(record.position.file)
        if file is None:
            file = files[record.position.file] = len(files)
            name = record.position.file.encode("utf-8", "surrogateescape")
            out.append(b"F" + struct.pack("<H", len(name)) + name)
        owner = record.name.to_wire()
        rdata = record.rdata.to_wire()
        out.append(b"R" + struct.pack("<HIHHIB", file, record.position.line,
                                      record.rdata.rdtype, record.rdata.rdclass, record.ttl,
                                      len(owner)))
        out.append(owner + struct.pack("<H", len(rdata)) + rdata)
    path.write_bytes(b"".join(out))


def read_records(path: Path) -> Iterator[tuple[bytes, int, int, bytes]]:
    """The records of a file in the same form, as the core writes a zone it signed: owner (wire
    format), type, TTL, RDATA (wire format)."""
    data = path.read_bytes()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a records file")
    at = 8
    while at < len(data):
        if data[at:at + 1] == b"F":
            at += 3 + struct.unpack_from("<H", data, at + 1)[0]
            continue
        _, _, rdtype, _, ttl, owner_len = struct.unpack_from("<HIHHIB", data, at + 1)
        at += 16
        owner = data[at:at + owner_len]
        at += owner_len
        rdata_len = struct.unpack_from("<H", data, at)[0]
        yield owner, rdtype, ttl, data[at + 2:at + 2 + rdata_len]
        at += 2 + rdata_len
