"""Zone files read with dnspython, keeping the file and line of every record: those the core's
fast reader leaves (handover.py hands the records over).

dnspython's zone-file Reader does the real work ($ORIGIN, $TTL, $INCLUDE, $GENERATE, relative
names, escapes, parentheses, RFC 3597 unknown types). It hands each record to a transaction; we
give it a small collector instead, which notes where the record started so that every later
stage can name `file:line`. The Reader is told the zone origin is the root so that it reports
out-of-zone records to us (it would drop them silently); the core's checks reject them.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Callable

import dns.exception
import dns.name
import dns.rdata
import dns.rdataclass
import dns.tokenizer
import dns.zonefile

from ..config import ZoneSource
from ..errors import CompileError, Diagnostic, Position
from . import mailtypes

mailtypes.register()


@dataclass(frozen=True)
class Record:
    name: dns.name.Name
    ttl: int
    rdata: dns.rdata.Rdata
    position: Position


@dataclass(frozen=True)
class ParsedZone:
    source: ZoneSource
    records: tuple[Record, ...]


class _LineTrackingTokenizer(dns.tokenizer.Tokenizer):
    """Remembers the line of the last token it returned. dnspython's own line_number has
    already moved on when the token was the last on its line, so messages would name the
    next line."""

    token_line = 1

    def get(self, want_leading: bool = False, want_comment: bool = False):
        token = super().get(want_leading, want_comment)
        if not token.is_eol_or_eof():
            self.token_line = self.line_number - (1 if self.ungotten_char == "\n" else 0)
        return token


class _RootManager:
    """The part of a dnspython transaction manager the Reader asks about: the origin."""

    def origin_information(self):
        return dns.name.root, False, dns.name.root


class _Collector:
    """Receives each record from the Reader, with the position the Reader was at."""

    def __init__(self, source: ZoneSource, on_record: Callable[[], None]):
        self.manager = _RootManager()
        self.on_record = on_record
        self.reader: _PositionedReader | None = None
        self.records: list[Record] = []
        self._zone_dir = os.path.dirname(source.display)
        self.source_path = source.path

    def check_put_rdataset(self, check) -> None:
        """The Reader's own CNAME check has no positions; the core's checks do it instead."""

    def _set_origin(self, origin) -> None:
        pass

    def add_unicode(self, value) -> None:
        pass

    def add(self, name, ttl, rdata) -> None:
        assert self.reader is not None
        self.records.append(Record(name, ttl, rdata, self.reader.record_position))
        self.on_record()

    def display(self, filename: str) -> str:
        """Included files are opened relative to the zone file's directory; say so in messages."""
        if self.reader and filename != self.reader.top_file and not os.path.isabs(filename):
            return os.path.join(self._zone_dir, filename)
        return filename


class _PositionedReader(dns.zonefile.Reader):
    """A Reader that remembers where the record it is reading began."""

    def __init__(self, tok, collector: _Collector, origin: dns.name.Name):
        self.top_path = os.path.abspath(str(collector.source_path))
        super().__init__(tok, dns.rdataclass.IN, collector, allow_include=True)
        self.top_file = tok.filename
        self.collector = collector
        # Relative names are relative to the real origin, even though the Reader's zone is root.
        self.current_origin = origin
        self.last_name = origin
        self.record_position = Position(tok.filename, 1)

    @property
    def tok(self) -> _LineTrackingTokenizer:
        return self._tok

    @tok.setter
    def tok(self, tok: dns.tokenizer.Tokenizer) -> None:
        if not isinstance(tok, _LineTrackingTokenizer):  # a file $INCLUDE has just opened
            tok.__class__ = _LineTrackingTokenizer  # track its lines too
            self._refuse_cycle(tok.filename)
        self._tok = tok

    def _refuse_cycle(self, filename: str) -> None:
        """A file that includes itself, directly or through others, would be read until the
        open files ran out. Raised at the $INCLUDE, while the including file is current.
        Included names are relative to the zone's directory, the working one while reading."""
        including = [state[0].filename for state in self.saved_state[1:]]
        if os.path.abspath(filename) in [self.top_path, *map(os.path.abspath, including)]:
            chain = " -> ".join([self.top_file, *including, filename])
            raise dns.exception.SyntaxError(f"$INCLUDE cycle: {chain}")

    def _note_position(self) -> None:
        self.record_position = self.error_position()

    def _rr_line(self) -> None:
        self._note_position()
        super()._rr_line()

    def _generate_line(self) -> None:
        self._note_position()
        token = self.tok.get()
        self.tok.unget(token)
        _check_range(token.value if token.is_identifier() else "")
        super()._generate_line()

    def error_position(self) -> Position:
        return Position(self.collector.display(self.tok.filename), self.tok.token_line)


# BIND's bound on a $GENERATE range's start, stop and step (its manual: positive integers up
# to 2^31 - 1). dnspython has none: a stop of 4294967296, a digit too many, made records until
# memory ran out.
MAX_GENERATE = 2**31 - 1


def _check_range(text: str) -> None:
    """Refuse a $GENERATE range with a number past MAX_GENERATE; dnspython says the rest."""
    numbers = text.replace("/", "-").split("-")
    if any(n.isascii() and n.isdigit() and int(n) > MAX_GENERATE for n in numbers):
        raise dns.exception.SyntaxError(f"$GENERATE range {text}: a number past {MAX_GENERATE} "
                                        f"(2^31 - 1, as BIND takes)")


def parse_zone(source: ZoneSource, on_record: Callable[[], None] = lambda: None) -> ParsedZone:
    """Read one zone file; raise CompileError naming file:line on the first syntax error.
    `on_record` is called after each record (progress reports count them)."""
    collector = _Collector(source, on_record)
    try:
        f = open(source.path, encoding="utf-8")
    except OSError as exc:
        raise CompileError([Diagnostic(Position(source.display, 0), "error",
                                       f"cannot read zone file: {exc.strerror}")]) from None
    with f:
        tok = _LineTrackingTokenizer(f, source.display)
        reader = _PositionedReader(tok, collector, source.origin)
        collector.reader = reader
        zone_dir = os.path.dirname(os.path.abspath(source.path))
        try:
            # $INCLUDE names a file relative to the including zone file, as Knot does.
            with contextlib.chdir(zone_dir):
                reader.read()
        except dns.exception.SyntaxError as exc:
            raise CompileError([_diagnostic(reader, _detail(exc, reader))]) from None
        except UnicodeDecodeError:
            raise CompileError([_not_utf8(source, reader)]) from None
        except (dns.exception.DNSException, OSError) as exc:
            text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            if isinstance(exc, OSError) and exc.filename:
                text = f"$INCLUDE {exc.filename}: {text}"
            if isinstance(exc, dns.zonefile.UnknownOrigin):
                text = "no origin for a relative name"
            raise CompileError([_diagnostic(reader, text or type(exc).__name__)]) from None
    return ParsedZone(source, tuple(collector.records))


def _not_utf8(source: ZoneSource, reader: _PositionedReader) -> Diagnostic:
    """A zone file that is not UTF-8 text, which dnspython reads zone files as: where its
    first octet that cannot be is (the decoder's own offset is into the block it was given),
    else (an $INCLUDE'd file) where the reader is."""
    try:
        with open(source.path, "rb") as f:
            octets = f.read()
        octets.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = octets.count(b"\n", 0, exc.start) + 1
        return Diagnostic(Position(source.display, line), "error",
                          f"not UTF-8 text: octet 0x{octets[exc.start]:02x}")
    except OSError:
        pass
    return _diagnostic(reader, "not UTF-8 text")


def _diagnostic(reader: _PositionedReader, text: str) -> Diagnostic:
    return Diagnostic(reader.error_position(), "error", text)


def _detail(exc: dns.exception.SyntaxError, reader: _PositionedReader) -> str:
    """The Reader prefixes its own `file:line: `; drop it, we give a corrected position."""
    text = str(exc)
    filename, line = reader.tok.where()
    prefix = f"{filename}:{line}: "
    if text.startswith(prefix):
        text = text[len(prefix):]
    return text or "syntax error"
