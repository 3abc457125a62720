"""The `zonebake` command's entry point. Before the driver's imports (a few tens of
milliseconds), a build into an output directory that its command line names takes the
directory's lock (toolchain/outdirlock.py: one build at a time) and, over an earlier build
there, begins its core on the manifest that build recorded, where the command line is that
build's (core/early.py's start, the lock first), and begins copying the earlier server's
data on a processor of its own (toolchain/prefill.py); where nothing else the driver reads
changed either, the rebuild is done without it (core/driverless.py); else the command runs
(cli.py)."""

from __future__ import annotations

import os
import sys
import time

from .core import early


def _output(argv: list[str]) -> str | None:
    """`build`'s output directory as its command line gives it (-o DIR, -oDIR, --output DIR,
    --output=DIR), if it does so plainly: argparse has the last word."""
    if argv[:1] != ["build"] or "--" in argv:
        return None
    found = None
    for i, arg in enumerate(argv[1:], 1):
        if arg in ("-o", "--output") and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--output="):
            found = arg.removeprefix("--output=")
        elif arg.startswith("-o") and not arg.startswith("--") and len(arg) > 2:
            found = arg[2:]
    return found or None


def run() -> None:
    started = time.monotonic()
    output = _output(sys.argv[1:])
    if output is not None:
        early.start(output, sys.argv[1:])  # pathlib and subprocess not imported yet
        from .toolchain import prefill  # its imports after the core's start
        prefill.start_early(output)
        from .core import driverless
        code = driverless.rebuild(output, started)
        if code is not None:  # without the driver: all of it written and closed
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    from .cli import run as command
    command()
