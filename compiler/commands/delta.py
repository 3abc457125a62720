"""Shipping a build as a binary delta against the one that runs: `zonebake delta` makes it,
`zonebake deploy --patch` applies it to the running server's own binary and swaps the result
in only when its SHA-256 is the one the build had.

A change of the zone moves one group's region of the data (compiler/core/layout/layout.c),
so a delta of the whole server is kilobytes where the server is hundreds of megabytes. The
delta is zstd's (`--patch-from`): the tool operators have; rsync's own deltas need nothing
from us but the hash check (`zonebake deploy --sha256`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from .. import paths
from ..errors import UsageError

LEVEL = 19
SMALLEST_WINDOW = 27  # zstd's --long default: 128 MiB


class Mismatch(Exception):
    """The patched server is not the build the delta was made for."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def check(path: Path, expected: str, what: str) -> None:
    """Mismatch unless `path`'s SHA-256 is `expected` (hex, either case)."""
    got = sha256(path)
    if got != expected.lower():
        raise Mismatch(f"{what}'s SHA-256 is {got}, not {expected}")


def window_log(size: int) -> int:
    """zstd's --long window (log2 octets) that reaches back over the whole old file: a
    match may lie anywhere in it. zstd takes at most 2^31."""
    log = SMALLEST_WINDOW
    while (1 << log) < size and log < 31:
        log += 1
    return log


def _zstd() -> str:
    found = shutil.which("zstd")
    if found is None:
        raise UsageError("zstd is not installed (the deltas are zstd's --patch-from; Debian: "
                         "apt install zstd)")
    return found


def _run(command: list[str], what: str, error: type[Exception] = UsageError) -> None:
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    if result.returncode != 0:
        # Its error lines, not the advice it prints at level 19 nor a stack it dumps after.
        errors = [line for line in result.stderr.splitlines() if line.startswith("zstd: ")]
        said = " ".join(" ".join(errors or [result.stderr]).split()) or \
            f"exit status {result.returncode}"
        raise error(f"{what}: zstd says: {said}")


def _window(old: Path, new_size: int) -> list[str]:
    log = window_log(max(old.stat().st_size, new_size))
    return [f"--long={log}", f"--memory={1 << (log - 20)}MB"]


def make(old: Path, new: Path, patch: Path) -> str:
    """Write the delta turning `old` into `new` to `patch`; returns new's SHA-256."""
    for path in (old, new):
        found = paths.status(path)
        if not paths.is_file(found):
            raise UsageError(f"{path}: no such file{paths.reason(found)}")
    if not paths.is_dir(paths.status(patch.absolute().parent)):
        raise UsageError(f"{patch}: no such directory to write it in")
    _run([_zstd(), "-q", "-f", f"-{LEVEL}", *_window(old, new.stat().st_size),
          f"--patch-from={old}", str(new), "-o", str(patch)], f"cannot make {patch}")
    return sha256(new)


def apply(old: Path, patch: Path, into: Path, expected: str) -> None:
    """`old` patched by `patch`, put at `into` (executable) when its SHA-256 is `expected`;
    else nothing is left there, and Mismatch says why."""
    found = paths.status(patch)
    if not paths.is_file(found):
        raise UsageError(f"{patch}: no such file{paths.reason(found)}")
    partial = into.with_name(f".{into.name}.patched")
    try:
        # The old binary may be hundreds of megabytes: the window covers it whole.
        _run([_zstd(), "-q", "-d", "-f", *_window(old, old.stat().st_size),
              f"--patch-from={old}", str(patch), "-o", str(partial)],
             f"cannot apply {patch} to {old} (made against another build?)", Mismatch)
        check(partial, expected, f"the server {patch} makes of {old}")
        os.chmod(partial, 0o755)
        os.replace(partial, into)
    finally:
        partial.unlink(missing_ok=True)


def running_binary(pid: int) -> Path:
    """The executable process `pid` runs, even when its file has been replaced since."""
    exe = Path(f"/proc/{pid}/exe")
    try:
        with open(exe, "rb"):
            return exe
    except OSError as exc:
        raise UsageError(f"cannot read the binary pid {pid} runs ({exe}): "
                         f"{exc.strerror}") from None
