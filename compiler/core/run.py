"""Running the core (the C files beside this one and in its layer folders): the whole compile
of a zone set.

The core reads the zone files with its fast reader, checks them, and makes the name tree,
every answer, the perfect hash and the layout: zonedata.bin, the layout's numbers in its
head. A zone file the fast reader declines is read by dnspython and its records handed
to the core in wire form (read/handover.py); every zone is checked and compiled by the same
code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import struct
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import clock
from ..config import ZoneSetConfig, ZoneSource
from ..emit import chaos_names
from ..errors import CompileError, Diagnostic, UsageError, from_core
from ..progress import core_phase
from ..dnssec import signatures, signing
from ..toolchain import replacing
from . import early as early_core
from .program import Failed, executable

EXIT_ERRORS = 1
EXIT_DECLINED = 3


class Unsupported(UsageError):
    """The set is beyond what the core compiles (a limit, an origin it cannot take)."""


@dataclass
class Signer:
    """What the build signs with: the key files in the core's numbering, the build's time."""

    requests: Path
    signed: Path
    cache: Path | None
    at: int
    exact: bool
    key_files: list[Path]
    write_signed: dict[int, Path] = dataclasses.field(default_factory=dict)  # zone: text file


def _inputs(config: ZoneSetConfig, zones: list[int], scratch: Path, at: int, exact: bool,
            write_signed: dict[int, Path]) -> tuple[Path, Path | None, Signer]:
    """Where the signatures to verify go in SCRATCH, the cache of those verified, and what
    the build signs with, for the zones numbered in `zones`."""
    origins = [config.zones[i].origin_text for i in zones]
    signer = Signer(scratch / "sign-requests", scratch / "signed",
                    signing.cache_path(origins), at, exact, [], write_signed)
    return scratch / "signatures", signatures.cache_path(origins), signer


def _manifest(config: ZoneSetConfig, lenient: bool, zones: list[int],
              records: dict[int, Path], verify: Path, cache: Path | None,
              signer: Signer, keep: dict[int, Path], now: int | str) -> str:
    """The core's input: the zones numbered in `zones`, with their records file where
    dnspython read them; where the signatures to verify go, and the cache of those verified
    (signatures.py); for zones the build signs, the keys and times (signing.py); the time the
    build checks signatures at, `now`."""
    lines = [f"minimal {int(config.server.minimal_responses)}", f"lenient {int(lenient)}",
             f"now {now}",
             f"signature-warning {config.server.signature_warning}",
             "signatures", str(verify), str(cache or ""),
             "signing", str(signer.requests), str(signer.signed), str(signer.cache or "")]
    if any("\n" in str(path) for path in (verify, cache or "", signer.cache or "")):
        raise Unsupported("a cache or temporary directory with a newline in its path")
    signer.key_files.clear()
    cwd = os.getcwd()
    for index in zones:
        zone = config.zones[index]
        # abspath, not resolve(): the same file for the core, without resolve's system call
        # per path component (half a second for 10,000 zones); and abspath's own way with
        # the working directory asked once, not once a zone (20 ms for 10,000 zones).
        path = os.fspath(zone.path)
        fields = (zone.origin_text, os.path.normpath(os.path.join(cwd, path)), zone.display)
        if any("\n" in field for field in fields) or "\n" in str(records.get(index, "")):
            raise Unsupported(f"{zone.display}: a path with a newline")
        lines += ["zone", *fields]
        if index in records:
            lines.append(f"records {records[index]}")
        if index in keep:
            lines.append(f"keep-records {_partial(keep[index])}")
        if zone.dnssec is not None:
            lines += signing.manifest_lines(zone, signer.at, signer.exact, signer.key_files)
            if index in signer.write_signed:
                lines.append(f"write-signed {_partial(signer.write_signed[index])}")
    for name, text in chaos_names(config.server):
        lines += ["chaos", str(len(name)), text.encode().hex()]
    return "\n".join(lines + ["end", ""])


@dataclasses.dataclass(frozen=True)
class State:
    """A build's state (layout/reuse.c): where this build writes its own, and the earlier
    build's state and data, which the core copies the regions a change does not reach from
    when they match (each may be missing: a full build). Beside each state, its image of a
    zone's records as read (read/image.c): `image_out` and `image_earlier`.
    `earlier_span`: where the earlier data lies in its file, (offset, length), when the file
    is not the data alone (a server: cc.py)."""
    out: Path
    earlier: Path
    earlier_data: Path | None  # None: none
    earlier_span: tuple[int, int] | None = None

    @property
    def image_out(self) -> Path:
        return self.out.with_suffix(".image")

    @property
    def image_earlier(self) -> Path:
        return self.earlier.with_suffix(".image")


def _with_state(manifest: str, program: Path, state: State | None) -> str:
    if state is None:
        return manifest
    paths = [str(state.out), *(str(path) if path is not None and path.is_file() else ""
                               for path in (state.earlier, state.earlier_data))]
    if any("\n" in path for path in paths):
        raise Unsupported("an output directory with a newline in its path")
    images = [str(state.image_out),
              str(state.image_earlier) if state.image_earlier.is_file() else ""]
    if any("\n" in path for path in images):
        raise Unsupported("an output directory with a newline in its path")
    at, length = state.earlier_span or (0, 0)
    return _with_lines(manifest, ["state", *paths, f"{at} {length}", "image", *images,
                                  f"core-id {program.name}"])


def _with_lines(manifest: str, lines: list[str]) -> str:
    """The manifest with LINES before its `end`."""
    return manifest.removesuffix("end\n") + "\n".join([*lines, "end", ""])


def _asked(manifest: str, program: Path, state: State | None, ask_where: bool) -> str:
    """What the core is given: the manifest, the states to build over, and whether to ask
    where the data goes."""
    asked = _with_state(manifest, program, state)
    return _with_lines(asked, ["ask-where"]) if ask_where else asked


def next_manifest(config: ZoneSetConfig, lenient: bool, program: Path, state: State
                  ) -> str | None:
    """The manifest the next build of CONFIG over STATE (the outputs just put in place)
    gives the core's PROGRAM when nothing changes, its scratch directory and time left as
    early.py's placeholders; None where it depends on more than that: a zone the build
    signs, unless SOURCE_DATE_EPOCH fixes the signatures' times (which early.py compares),
    and a zone with a primary, whose file the driver brings up to date before the core
    reads it (transfer.py), after an early core would have read it."""
    at, exact = signing.build_time()
    if any(zone.primary is not None or (zone.dnssec is not None and not exact)
           for zone in config.zones):
        return None
    zones = list(range(len(config.zones)))
    verify, cache, signer = _inputs(config, zones, Path(early_core.SCRATCH), at, exact, {})
    manifest = _manifest(config, lenient, zones, {}, verify, cache, signer, {},
                         early_core.NOW)
    return _asked(manifest, program, state, True)


@dataclass(frozen=True)
class Layout:
    """Where the core put each table in zonedata.bin, and its size: the data's head
    (runtime/zonedata.h, struct zb_head), for the tests that read the data back."""

    groups_off: int  # the perfect hash's groups (runtime/hash.h)
    ngroups: int
    group_mask: int
    nanswers: int
    seed: int
    # CH-class names answered with a TXT: (lowercased wire name, answer offset).
    chaos: tuple[tuple[bytes, int], ...]
    data_size: int
    signed_nodes: int = 0  # a node's DO twin: the node after it (1); 0 when none is signed
    # Signed zones, each its number in the set and its signatures' earliest expiration
    # (seconds since 1970).
    expiries: tuple[tuple[int, int], ...] = ()
    # Every zone: its number in the set and its SOA serial.
    serials: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Baked:
    layout: Layout  # read from the data's head
    warnings: tuple[Diagnostic, ...] = ()
    core: Path | None = None  # the core's program that made it


class _ZoneErrors(CompileError):
    """The core's errors and warnings, by the zone's number in the manifest."""

    def __init__(self, by_zone: dict[int, list[Diagnostic]]):
        super().__init__([d for zone in sorted(by_zone) for d in by_zone[zone]])
        self.by_zone = by_zone


class Unreadable(Exception):
    """The fast reader declined this zone (its number in the manifest): dnspython reads it."""

    def __init__(self, zone: int, reason: str):
        super().__init__(reason)
        self.zone = zone


Phase = Callable[[str, float, int, str], None]  # name, seconds, count, unit
# Asked once the data's size is known: where to write the data, (a file, the offset in it,
# the octets from there that hold the earlier build's data already), the file made ready for
# it (cc.EarlyServer.place); None: to its own file, data_file.
Where = Callable[[int], "tuple[Path, int, int] | None"]
Along = Callable[[str, int, int, str], None]  # name, done, total, unit


def bake(config: ZoneSetConfig, data_file: Path, cache: bool = True,
         on_phase: Phase = lambda *_: None, lenient: bool = False,
         hand_over: bool = True, dnspython_reads: bool = False,
         on_record: Callable[[], None] = lambda: None,
         write_signed: dict[int, Path] | None = None,
         last_good: dict[int, Path] | None = None, keep: dict[int, Path] | None = None,
         on_along: Along = lambda *_: None, state: State | None = None,
         into: Where | None = None, on_started: Callable[[], None] = lambda: None) -> Baked:
    """Write the set's blob to data_file; raise CompileError when the zones have errors (with
    every diagnostic), Unsupported when the core cannot compile the set. `cache`: keep the
    core's executable in the cache if it has to be compiled. `on_phase` hears of each of the
    core's phases as it ends (progress reports). `lenient`: missing glue, and the DNSSEC
    findings that leave a zone verifiable (signatures.c), are warnings. `on_record` hears of
    each record dnspython reads, `on_along` how far the signatures made and verified for the
    core are.

    A zone file the fast reader declines is read by dnspython and its records handed over
    (handover.py), and the core runs again; one dnspython cannot read is reported with the
    other zones' errors, as the zones are checked without it. For tests of the readers: with
    `hand_over` false, the fast reader's decline is raised as it is (Unreadable); with
    `dnspython_reads`, dnspython reads every zone file. `write_signed`: where to write the
    zones the build signs as zone files, by their number in the set (signing.py).
    `last_good`: zones to compile from their last good copy's records instead of their files;
    `keep`: where to keep the records of zones without errors, as their last good copy
    (keepgoing.py). `state`: where the build's state goes, and the earlier build's to build
    over (State; the core's layout/reuse.c). `into`: where the data goes instead, once its
    size is known (Where). `on_started` hears that the core's program has started."""
    records: dict[int, Path] = dict(last_good or {})
    keep = keep or {}
    unreadable: dict[int, list[Diagnostic]] = {}
    early = early_core.take()  # the core begun before the driver's imports, if any
    with executable(cache) as program, _scratch(early) as scratch:
        for index in range(len(config.zones)) if dnspython_reads else ():
            records[index] = Path(scratch) / f"{index}.records"
            try:
                _hand_over(config.zones[index], records[index], on_record)
            except CompileError as unread:
                unreadable[index] = unread.diagnostics
        at, exact = signing.build_time()
        # The build's time: the early core's, which the command read as it began.
        now = early.now if early is not None else clock.now()
        try:
            while True:
                zones = [i for i in range(len(config.zones)) if i not in unreadable]
                verify, cache, signer = _inputs(config, zones, Path(scratch), at, exact,
                                                write_signed or {})
                manifest = _manifest(config, lenient, zones, records, verify, cache, signer,
                                     keep, now)
                _prepare_signed(signer.write_signed.values())
                try:
                    if not unreadable:
                        asked = _asked(manifest, program, state, into is not None)
                        taken, early = early, None
                        baked = _run_once(program, asked, config, data_file, on_phase,
                                          (verify, cache), signer, on_along, into, on_started,
                                          taken, state)
                        for path in keep.values():
                            _keep(_partial(path), path)
                        _publish_signed(signer.write_signed.values())
                        return baked
                    if zones:  # the other zones' errors are reported too
                        _run_once(program, manifest, config, Path(scratch) / "checked.bin",
                                  on_phase, (verify, None),
                                  dataclasses.replace(signer, cache=None))
                    raise _ZoneErrors({})
                except Unreadable as exc:
                    if not hand_over:
                        raise
                    index = zones[exc.zone]
                    if index in records:
                        raise Failed(f"the core declined the records dnspython read of "
                                     f"{config.zones[index].display}") from None
                    records[index] = Path(scratch) / f"{index}.records"
                    try:
                        _hand_over(config.zones[index], records[index], on_record)
                    except CompileError as unread:
                        unreadable[index] = unread.diagnostics
                except _ZoneErrors as exc:
                    if not unreadable:
                        raise
                    # Each zone with errors, in the set's order.
                    by_zone = {zones[i]: d for i, d in exc.by_zone.items()}
                    by_zone.update(unreadable)
                    raise _ZoneErrors(by_zone) from None
        finally:  # a signed zone written out by a build that failed
            for path in (write_signed or {}).values():
                _partial(path).unlink(missing_ok=True)
            if early is not None:  # not run: the zones dnspython reads first
                _stop_early(early, state)


@contextlib.contextmanager
def _scratch(early: early_core.Early | None):
    """The build's scratch directory: the early core's, where there is one (its manifest
    names it), else a temporary one."""
    if early is None:
        with tempfile.TemporaryDirectory(prefix="zonebake-records-") as scratch:
            yield scratch
        return
    try:
        yield early.scratch
    finally:
        early.remove_scratch()


def _stop_early(early: early_core.Early, state: State | None) -> None:
    """An early core not taken over: stopped, and the files it may have begun (its state
    and image, which the next core writes again or leaves alone) gone."""
    early.stop()
    if state is not None:
        state.out.unlink(missing_ok=True)
        state.image_out.unlink(missing_ok=True)


def _hand_over(zone: ZoneSource, into: Path, on_record: Callable[[], None]) -> None:
    """dnspython reads the zone and its records go to the core in wire form (read/handover.py,
    over most of dnspython): imported only for a zone the fast reader declines."""
    from ..read import handover
    handover.write_records(zone, into, on_record)


def _verify(path: Path, count: int, on_phase: Phase,
            on_along: Along) -> dict[int, list[Diagnostic]]:
    start = time.monotonic()
    try:
        failed = signatures.verify(path, count,
                                   lambda done: on_along("verifying", done, count,
                                                         "signatures"))
    except (OSError, ValueError, struct.error) as exc:  # the core's file: a bug of ours
        raise Failed(f"cannot verify the signatures the core wrote: {exc}") from None
    on_phase("verify", time.monotonic() - start, count, "signatures")
    return failed


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def _keep(new: Path, cache: Path | None) -> None:
    """This build's file becomes the kept one, once the build succeeded: the digests of the
    signatures verified (signatures.py), the signatures made (signing.py), a zone's last good
    copy (keepgoing.py)."""
    if cache is None or not new.exists():
        return
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        replacing.put(new, cache)
    except OSError:
        pass  # a cache, no more: the next build verifies or signs again


def _prepare_signed(paths) -> None:
    """Where the core writes each signed zone (`--write-signed`): beside its place, which it
    takes once the build succeeded (_publish_signed)."""
    for out in paths:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            _partial(out).open("wb").close()
        except OSError as exc:
            raise UsageError(f"--write-signed: cannot write {out}: {exc.strerror}") from None


def _publish_signed(paths) -> None:
    for out in paths:
        try:
            os.replace(_partial(out), out)
        except OSError as exc:
            raise UsageError(f"--write-signed: cannot write {out}: {exc.strerror}") from None


def _sign(signer: Signer, count: int, on_along: Along) -> None:
    """The core's phase `sign` includes this time."""
    try:
        signing.sign(signer.requests, signer.signed, signer.key_files, count,
                     lambda done: on_along("signing", done, count, "signatures"))
    except (OSError, ValueError, struct.error) as exc:  # the core's file: a bug of ours
        raise Failed(f"cannot sign what the core asked for: {exc}") from None


def _reap(process: subprocess.Popen) -> None:
    process.wait()
    process.stderr.close()


@contextlib.contextmanager
def _core(program: Path, manifest: str, data_file: Path, early: early_core.Early | None,
          state: State | None):
    """The core's process on MANIFEST, where it writes the data when told `alone`, and
    whether it is the early core, begun on the same (early.py); else one started now."""
    if early is not None:
        process = early.adopt(str(program), manifest)
        if process is not None:
            yield process, Path(early.data_file), True
            return
        _stop_early(early, state)
    with tempfile.NamedTemporaryFile("w", prefix="zonebake-manifest-", suffix=".txt") as m:
        m.write(manifest)
        m.flush()
        yield subprocess.Popen([str(program), m.name, str(data_file)], text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE), data_file, False


def _run_once(program: Path, manifest: str, config: ZoneSetConfig, data_file: Path,
              on_phase: Phase, verified: tuple[Path, Path | None], signer: Signer,
              on_along: Along = lambda *_: None, into: Where | None = None,
              on_started: Callable[[], None] = lambda: None,
              early: early_core.Early | None = None, state: State | None = None) -> Baked:
    """One run of the core's program (the early core's, where it was begun on the same
    manifest); the signatures it asks for are made (signing.py), and those it writes out to
    check are verified meanwhile (signatures.py). Where it asks where the data goes, `into`
    says."""
    diagnostics: list[tuple[int, Diagnostic]] = []
    verifier = ThreadPoolExecutor(1)
    verifying: Future | None = None
    with _core(program, manifest, data_file, early, state) as (process, alone, taken):
        where = (alone, 0)
        on_started()
        if taken:  # a count (progress.py): the core ran beside the driver's imports
            on_phase("begun before the driver", 0.0, 1, "core")
        said = []
        done = False  # the core said its outputs are all written (main.c's say_done)
        try:
            for line in process.stderr:
                if line == "done\n":
                    done = True
                    break
                if line.startswith("phase "):
                    on_phase(*core_phase(line))
                elif line.startswith("diag "):
                    diagnostics.append(from_core(line))
                elif line.startswith("sign "):  # the core waits for the signatures
                    _sign(signer, int(line.split()[1]), on_along)
                    process.stdin.write("signed\n")
                    process.stdin.flush()
                elif line.startswith("layout "):  # the core waits for the answer
                    place = into(int(line.split()[1])) if into is not None else None
                    if place is not None:
                        where = place[:2]
                        process.stdin.write(f"into {place[1]} {place[2]} {place[0]}\n")
                    else:
                        process.stdin.write("alone\n")
                    process.stdin.flush()
                elif line.startswith("signatures "):
                    count = int(line.split()[1])
                    if count:
                        verifying = verifier.submit(_verify, verified[0], count, on_phase,
                                                    on_along)
                else:
                    said.append(line)
        except BaseException:
            process.kill()
            process.wait()
            alone.unlink(missing_ok=True)
            verifier.shutdown(wait=False, cancel_futures=True)
            raise
        if done:  # its exit is the kernel's to finish, beside the rest of the build and after
            returncode = 0
            threading.Thread(target=_reap, args=(process,), daemon=True).start()
        else:
            returncode = process.wait()
        process.stdin.close()
    failed = verifying.result() if verifying is not None else {}
    verifier.shutdown()
    message = "".join(said).strip()
    if returncode != 0 or failed:
        alone.unlink(missing_ok=True)
    elif where[0] == alone != data_file:  # the early core's own: where the caller looks
        os.replace(alone, data_file)
        where = (data_file, 0)
    if (returncode == EXIT_ERRORS and diagnostics) or (returncode == 0 and failed):
        by_zone: dict[int, list[Diagnostic]] = {}
        for zone, d in diagnostics:
            by_zone.setdefault(zone, []).append(d)
        for zone, errors in failed.items():
            by_zone[zone] = errors + by_zone.get(zone, [])
        raise _ZoneErrors(by_zone)
    if verifying is not None and returncode == 0:
        _keep(verified[0].with_name(verified[0].name + ".digests"), verified[1])
    if returncode == 0:
        _keep(signer.signed.with_name(signer.signed.name + ".cache"), signer.cache)
    if returncode == EXIT_DECLINED:
        reason = message.removeprefix("declined: ")
        if reason.startswith("zone "):
            zone, why = reason.removeprefix("zone ").split(": ", 1)
            raise Unreadable(int(zone), why)
        raise Unsupported(f"cannot compile the zone set: {reason}")
    if returncode != 0:
        raise Failed(f"the compiler's core failed (exit {returncode}): {message}")
    return Baked(_layout(config, *where), tuple(d for _, d in diagnostics), program)


# runtime/zonedata.h: struct zb_head, struct zb_zone_numbers.
HEAD = struct.Struct("<QQIIIIIIIIII8x")
ZONE_NUMBERS = struct.Struct("<IIq")


def _layout(config: ZoneSetConfig, data_file: Path, at: int) -> Layout:
    """The layout the core wrote into the data's head, AT in DATA_FILE."""
    try:
        with open(data_file, "rb") as data:
            data.seek(at)
            head = data.read(HEAD.size)
            (size, seed, groups_off, ngroups, group_mask, nanswers, _, signed_nodes,
             zones_off, nzones, chaos_off, nchaos) = HEAD.unpack(head)
            data.seek(at + zones_off)
            zones = [ZONE_NUMBERS.unpack(data.read(ZONE_NUMBERS.size)) for _ in range(nzones)]
            data.seek(at + chaos_off)
            chaos = struct.unpack(f"<{nchaos}I", data.read(4 * nchaos))
    except (OSError, struct.error) as exc:  # the core's file: a bug of ours
        raise Failed(f"cannot read the data's head: {exc}") from None
    names = [name for name, _ in chaos_names(config.server)]
    return Layout(groups_off, ngroups, group_mask, nanswers, seed, tuple(zip(names, chaos)),
                  size, signed_nodes,
                  tuple((z, expires) for z, (_, _, expires) in enumerate(zones) if expires),
                  tuple((z, serial) for z, (serial, _, _) in enumerate(zones)))
