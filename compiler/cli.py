"""The `zonebake` command: `zonebake build` compiles a zone set into a static responder;
`zonebake check` does everything but write it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .build import build, compile_zoneset
from .config import load_toml, zones_from_args
from .errors import CompileError, UsageError
from .progress import Progress

EXIT_OK, EXIT_ZONE_ERROR, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zonebake", description=__doc__)
    parser.add_argument("--version", action="version", version=f"zonebake {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="compile zones into OUTDIR/zonebake-server")
    c = commands.add_parser("check", help="check that zones compile; write nothing")
    for sub in (b, c):
        source = sub.add_mutually_exclusive_group(required=True)
        source.add_argument("-c", "--config", type=Path, metavar="TOML",
                            help="zonebake.toml listing the zones and the server's defaults")
        source.add_argument("--zone", action="append", metavar="ORIGIN=FILE",
                            help="a zone to serve (repeat for several)")
        sub.add_argument("-q", "--quiet", action="store_true",
                         help="no progress report on stderr (warnings and errors still)")
        sub.add_argument("--lenient", action="store_true",
                         help="integrity errors the peers let you switch off (missing glue) "
                              "become warnings")
    b.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR",
                   help="where to write zonedata.c, zonedata.bin and zonebake-server")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = load_toml(args.config) if args.config else zones_from_args(args.zone)
        progress = Progress(out=None if args.quiet else sys.stderr)
        if args.command == "build":
            compiled = build(config, args.output, args.lenient, progress)
        else:
            compiled = compile_zoneset(config, args.lenient, progress)
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CompileError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        errors = sum(d.severity == "error" for d in exc.diagnostics)
        print(f"zonebake: {errors} error(s); nothing written", file=sys.stderr)
        return EXIT_ZONE_ERROR
    for warning in compiled.warnings:
        print(warning, file=sys.stderr)
    progress.finish()
    return EXIT_OK
