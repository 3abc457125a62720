"""Diagnostics that name where in a zone file they come from.

Every problem the compiler finds in a zone is a Diagnostic with the file and line of the record
(or directive) that caused it, printed as `FILE:LINE: error: text`, the form compilers and
named-checkzone use, so editors and CI logs can jump to it.
"""

from __future__ import annotations

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


class CompileError(Exception):
    """The zone set cannot be compiled; carries every error found (at least one)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


class UsageError(Exception):
    """The command line or the configuration file is wrong (not a zone's content)."""
