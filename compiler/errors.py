"""Diagnostics that name where in a zone file they come from.

Every problem the compiler finds in a zone is a Diagnostic with the file and line of the record
(or directive) that caused it, printed as `FILE:LINE: error: text`, the form compilers and
named-checkzone use, so editors and CI logs can jump to it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Position:
    """Where a record came from: the file as the user named it, and a 1-based line number."""

    file: str
    line: int  # 0: the file as a whole (it cannot be read)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class Diagnostic:
    position: Position
    severity: str  # "error" or "warning"
    message: str

    def __str__(self) -> str:
        return f"{self.position}: {self.severity}: {self.message}"


def from_core(line: str) -> tuple[int, Diagnostic]:
    """`diag ZONE SEVERITY LINE FILE_LENGTH FILE MESSAGE`, as the core says it
    (diagnostics.c): the zone's number in the manifest, and the diagnostic."""
    zone, severity, number, length, rest = line[5:].rstrip("\n").split(" ", 4)
    file, message = rest[:int(length)], rest[int(length) + 1:]
    return int(zone), Diagnostic(Position(file, int(number)), severity, message)


MAX_PER_FILE = 100  # diagnostics shown for one file, as gcc's -fmax-errors


def print_all(diagnostics) -> None:
    """Each diagnostic on its line of stderr, but at most MAX_PER_FILE for a file, then how
    many more: a zone loaded under the wrong origin has an error on every line."""
    shown: dict[str, int] = {}
    for diagnostic in diagnostics:
        file = diagnostic.position.file
        shown[file] = shown.get(file, 0) + 1
        if shown[file] <= MAX_PER_FILE:
            print(diagnostic, file=sys.stderr)
    for file, count in shown.items():
        if count > MAX_PER_FILE:
            print(f"{file}: {count - MAX_PER_FILE} more error(s) and warning(s) not shown",
                  file=sys.stderr)


class CompileError(Exception):
    """The zone set cannot be compiled; carries every error found (at least one)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


class UsageError(Exception):
    """The command line or the configuration file is wrong (not a zone's content)."""
