"""The `zonebake` command: `zonebake build` compiles a zone set into a static responder;
`zonebake check` does everything but write it; `zonebake deploy` swaps a built responder in
for the running one; `zonebake follow` builds (and deploys) whenever a primary's zone changes, or its signatures
are due; `zonebake re-sign` builds and deploys a set whose signatures are due; `zonebake
keygen` makes a DNSSEC key pair and `zonebake ds` prints the
DS records for the parent; `zonebake delta` makes a binary delta between two builds, which
`zonebake deploy --patch` applies to the running server."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__
from .build import build, check
from .config import load_toml, zones_from_args
from .dnssec.algorithms import ALGORITHMS
from .errors import CompileError, UsageError, print_all
from .progress import Progress
from .core import driverless, early as early_core
from .toolchain import prefill

EXIT_OK, EXIT_ZONE_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_BUILT_WITHOUT_BROKEN = 3  # --keep-going: built, but without some zones as they are
DEFAULT_CONFIG = Path("/etc/zonebake/zonebake.toml")  # as /etc/nsd/nsd.conf, /etc/knot/knot.conf
EXIT_DEPLOY_FAILED = 1  # the old server still serves


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="zonebake", description=__doc__)
    parser.add_argument("--version", action="version", version=f"zonebake {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="compile zones into OUTDIR/zonebake-server")
    c = commands.add_parser("check", help="check that zones compile; write nothing")
    for sub in (b, c):
        source = sub.add_mutually_exclusive_group()
        source.add_argument("-c", "--config", type=Path, metavar="TOML",
                            help="zonebake.toml listing the zones and the server's defaults "
                                 f"(default: {DEFAULT_CONFIG})")
        source.add_argument("--zone", action="append", metavar="ORIGIN=FILE",
                            help="a zone to serve (repeat for several)")
        sub.add_argument("-q", "--quiet", action="store_true",
                         help="no progress report on stderr (warnings and errors still)")
        sub.add_argument("--lenient", action="store_true",
                         help="findings the peers serve anyway become warnings: missing glue; "
                              "in a signed zone, those that leave it verifiable (an algorithm "
                              "that signs nothing, RRSIGs by keys the apex lacks, signatures "
                              "out of their validity period); a signature that fails against "
                              "a key of the apex stays an error")
    b.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR",
                   help="where to write zonebake-server and zonedata.{c,state}; an earlier "
                   "build there is built over")
    b.add_argument("--keep-going", action="store_true",
                   help="build the set without its broken zones (or with the last good copy "
                        "of each, kept in OUTDIR by earlier --keep-going builds); exit status "
                        "3 when any was broken")
    b.add_argument("--write-signed", type=Path, metavar="FILE",
                   help="also write the zone the build signs (its dnssec table) as a zone "
                        "file, for ldns-verify-zone or dnssec-verify; a directory when "
                        "several are signed")
    d = commands.add_parser("deploy", help="swap OUTDIR/zonebake-server in for the server "
                                           "running at the control socket; lose no query")
    d.add_argument("outdir", type=Path, metavar="OUTDIR", help="where zonebake build wrote it")
    d.add_argument("--control", type=Path, required=True, metavar="PATH",
                   help="the running server's control socket (its --control PATH)")
    d.add_argument("--log", type=Path, metavar="FILE",
                   help="append the new server's stderr to FILE (default: this stderr)")
    d.add_argument("--timeout", type=float, default=30, metavar="SECONDS",
                   help="give up (and stop the new server) after this long (default: 30)")
    d.add_argument("--patch", type=Path, metavar="DELTA",
                   help="make OUTDIR/zonebake-server from the running server's binary and "
                        "DELTA (zonebake delta), then swap it in; needs --sha256")
    d.add_argument("--sha256", metavar="HEX",
                   help="swap in only a server whose SHA-256 is HEX (zonebake delta prints "
                        "it); else deploy fails and the running server stays")
    d.usage = "zonebake deploy OUTDIR --control PATH [--patch DELTA] [--sha256 HEX] " \
              "[--log FILE] [--timeout SECONDS] [-- SERVER_OPTION ...]"
    d.epilog = ("Options after -- go to the new zonebake-server, e.g. -- --threads 4 --user "
                "zonebake; not --listen: the sockets come with the takeover.")
    f = commands.add_parser("follow", help="listen for NOTIFY from the zones' primaries; "
                                           "transfer, build (and deploy) what changes")
    _set_options(f)
    f.add_argument("--listen", action="append", required=True, metavar="ADDRESS:PORT",
                   help="where the primaries send NOTIFY (UDP and TCP; repeat for several)")
    f.add_argument("--deploy", action="store_true",
                   help="deploy each build to the server at the control socket, as zonebake "
                        "deploy, when it serves other serials or signatures")
    _deploy_options(f)
    f.add_argument("--keep-going", action="store_true", help="as zonebake build --keep-going")
    f.usage = "zonebake follow [-c TOML] -o OUTDIR --listen ADDRESS:PORT [--deploy] " \
              "[--control PATH] [...] [-- SERVER_OPTION ...]"
    r = commands.add_parser("re-sign", help="build and deploy the set when the signatures its "
                                            "server serves are due to be made again")
    _set_options(r)
    _deploy_options(r)
    r.usage = "zonebake re-sign [-c TOML] -o OUTDIR [--control PATH] [...] " \
              "[-- SERVER_OPTION ...]"
    t = commands.add_parser("delta", help="write the binary delta (zstd --patch-from) that "
                                          "turns the OLD server into the NEW; print NEW's "
                                          "SHA-256, for zonebake deploy --patch")
    t.add_argument("old", type=Path, metavar="OLD", help="the server that runs (its binary)")
    t.add_argument("new", type=Path, metavar="NEW", help="the server to ship")
    t.add_argument("-o", "--output", type=Path, required=True, metavar="DELTA",
                   help="where to write the delta")
    k = commands.add_parser("keygen", help="make a DNSSEC key pair for ORIGIN in BIND's format")
    k.add_argument("origin", metavar="ORIGIN", help="the zone the key signs, e.g. example.com.")
    k.add_argument("-a", "--algorithm", type=str.lower, choices=sorted(ALGORITHMS),
                   default="ed25519", help="the signing algorithm (default: ed25519)")
    k.add_argument("--ksk", action="store_true",
                   help="a key-signing key (the SEP flag: the parent's DS points to it)")
    k.add_argument("-d", "--directory", type=Path, default=Path("."), metavar="DIR",
                   help="where to write K<origin>+<alg>+<tag>.key and .private (default: .)")
    s = commands.add_parser("ds", help="print the DS records (SHA-256) of ORIGIN's keys")
    s.add_argument("origin", metavar="ORIGIN", help="the zone whose DS records to print")
    s.add_argument("--keys", type=Path, required=True, metavar="DIR",
                   help="the directory of ORIGIN's key pairs")
    return parser


def _set_options(sub: argparse.ArgumentParser) -> None:
    """The set and where to build it: follow's and re-sign's."""
    sub.add_argument("-c", "--config", type=Path, metavar="TOML",
                     help=f"zonebake.toml listing the zones (default: {DEFAULT_CONFIG})")
    sub.add_argument("-o", "--output", type=Path, required=True, metavar="OUTDIR",
                     help="where to build, as zonebake build -o")


def _deploy_options(sub: argparse.ArgumentParser) -> None:
    """How to build and deploy: follow's and re-sign's."""
    sub.add_argument("--control", type=Path, metavar="PATH",
                     help="the server's control socket (default: [server] control in the TOML)")
    sub.add_argument("--log", type=Path, metavar="FILE",
                     help="append a new server's stderr to FILE (default: this stderr)")
    sub.add_argument("--timeout", type=float, default=30, metavar="SECONDS",
                     help="give up a deploy after this long (default: 30)")
    sub.add_argument("--lenient", action="store_true", help="as zonebake build --lenient")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Everything after -- is the new server's (argparse would take its options for ours).
    server_args = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    args = _parser().parse_args(argv)
    if args.command == "deploy":
        return _deploy(args, server_args)
    if args.command in ("keygen", "ds"):
        return _keys(args)
    if args.command == "delta":
        return _delta(args)
    if args.command == "follow":
        return _follow(args, server_args)
    if args.command == "re-sign":
        return _resign(args, server_args)
    try:
        if not args.config and not args.zone:
            if not DEFAULT_CONFIG.exists():
                raise UsageError(f"no zones: give -c TOML or --zone ORIGIN=FILE ({DEFAULT_CONFIG}, "
                                 f"read when neither is given, does not exist)")
            args.config = DEFAULT_CONFIG
        config = load_toml(args.config) if args.config else zones_from_args(args.zone)
        progress = Progress(out=None if args.quiet else sys.stderr)
        broken = []
        if args.command == "build":
            built = build(config, args.output, args.lenient, progress, args.write_signed,
                          args.keep_going)
            warnings, broken = built.warnings, built.broken
            if built.replay is not None:
                driverless.record(args.output, built.replay, args.config, args.quiet)
        else:
            warnings = check(config, args.lenient, progress)
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CompileError as exc:
        print_all(exc.diagnostics)
        errors = sum(d.severity == "error" for d in exc.diagnostics)
        print(f"zonebake: {errors} error(s); nothing written", file=sys.stderr)
        return EXIT_ZONE_ERROR
    print_all(broken + list(warnings))
    progress.finish()
    if broken:
        left = sum(d.severity == "warning" for d in broken)
        print(f"zonebake: {left} zone(s) with errors, left out or compiled from their last good "
              f"copy; the rest built", file=sys.stderr)
        return EXIT_BUILT_WITHOUT_BROKEN
    return EXIT_OK


def run() -> None:
    """The `zonebake` command: main, and for `build` and `check`, whose outputs are all
    written and closed by then, an exit that skips the interpreter's teardown (freeing every
    module's objects: 10-15 ms of a rebuild that takes a third of a second)."""
    try:
        code = main()
    finally:  # those the command did not take over (it failed first)
        prefill.stop_early()
        early_core.stop_early()
    if sys.argv[1:2] in (["build"], ["check"]):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _deploy(args: argparse.Namespace, server_args: list[str]) -> int:
    from .commands.deploy import DeployError, deploy
    try:
        old, new = deploy(args.outdir, args.control, server_args, args.log, args.timeout,
                          args.patch, args.sha256)
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except DeployError as exc:
        print(f"zonebake: deploy failed: {exc}", file=sys.stderr)
        return EXIT_DEPLOY_FAILED
    print(f"zonebake: pid {new} serves in place of pid {old}", file=sys.stderr)
    return EXIT_OK


def _control(args: argparse.Namespace, config) -> Path | None:
    """--control, else the TOML's [server] control."""
    return args.control or (Path(config.server.control) if config.server.control else None)


def _follow(args: argparse.Namespace, server_args: list[str]) -> int:
    from .commands.follow import Deploying, follow
    try:
        config = load_toml(args.config or DEFAULT_CONFIG)
        control = _control(args, config)
        if args.deploy and control is None:
            raise UsageError("--deploy needs --control PATH or [server] control in the TOML")
        deploying = Deploying(control, server_args, args.log, args.timeout) \
            if args.deploy else None
        follow(config, args.output, args.listen, args.lenient, args.keep_going, deploying)
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _resign(args: argparse.Namespace, server_args: list[str]) -> int:
    from .commands.deploy import DeployError
    from .commands.resign import resign
    try:
        config = load_toml(args.config or DEFAULT_CONFIG)
        control = _control(args, config)
        if control is None:
            raise UsageError("re-sign needs --control PATH or [server] control in the TOML")
        done = resign(config, args.output, control, server_args, args.log, args.timeout,
                      args.lenient, lambda line: print(f"zonebake: {line}", file=sys.stderr))
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CompileError as exc:
        print_all(exc.diagnostics)
        print("zonebake: the build failed; the server serves what it served", file=sys.stderr)
        return EXIT_ZONE_ERROR
    except DeployError as exc:
        print(f"zonebake: re-sign failed: {exc}", file=sys.stderr)
        return EXIT_DEPLOY_FAILED
    if done.built is not None:
        print_all(done.built.broken + list(done.built.warnings))
    return EXIT_OK


def _delta(args: argparse.Namespace) -> int:
    from .commands import delta
    try:
        digest = delta.make(args.old, args.new, args.output)
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"zonebake: {args.output}: {args.output.stat().st_size} octets turn {args.old} "
          f"({args.old.stat().st_size} octets) into {args.new} ({args.new.stat().st_size})",
          file=sys.stderr)
    print(f"sha256 {digest}")
    return EXIT_OK


def _keys(args: argparse.Namespace) -> int:
    import dns.exception
    import dns.name

    from .dnssec.keys import ds_records, generate, load
    try:
        try:
            origin = dns.name.from_text(args.origin)
        except dns.exception.DNSException as exc:
            raise UsageError(f"{args.origin}: {exc}") from None
        if args.command == "keygen":
            pair = generate(origin, args.algorithm, args.ksk, args.directory)
            print(pair.path.stem)
            return EXIT_OK
        records = ds_records(origin, load(origin, args.keys))
        if not records:
            raise UsageError(f"no keys for {origin} in {args.keys}")
    except UsageError as exc:
        print(f"zonebake: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("\n".join(records))
    return EXIT_OK
