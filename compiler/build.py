"""The driver: run the core on the zone set, render zonedata.c, compile and link the server,
and put every output in place, or nothing when the zones have errors."""

from __future__ import annotations

import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from .config import ZoneSetConfig
from .errors import CompileError, Diagnostic, UsageError
from .progress import Progress
from .refreshed import Refreshed
from . import emit, keepgoing, paths
from .core import driverless, early as early_core, outputs, run as core
from .dnssec import signing
from .toolchain import cc, outdirlock, prefill
from .toolchain.prefill import STATE_FILE, earlier_server

T = TypeVar("T")
CORE_STARTS = 0.05  # seconds from build() to the core's start, where it is compiled already


@dataclass
class Built:
    warnings: list[Diagnostic]
    # --keep-going: the broken zones' errors, and what became of each (keepgoing.py).
    broken: list[Diagnostic] = field(default_factory=list)
    # What the next build needs to rebuild the set without the driver, where it may
    # (core/driverless.py): what the command line's reading adds is the command's.
    replay: driverless.Replay | None = None


# Beside the data: what the next build over this one needs to copy the regions a change
# does not reach (the core's layout/reuse.c), and to read only the lines of a zone file that
# changed (its image of the zone's records as read: read/image.c).
IMAGE_FILE = "zonedata.image"  # and STATE_FILE, SERVER_FILE (toolchain/prefill.py)


def _bake(config: ZoneSetConfig, data_file: Path, progress: Progress, lenient: bool,
          cache: bool = True, write_signed: dict[int, Path] | None = None,
          last_good: dict[int, Path] | None = None, keep: dict[int, Path] | None = None,
          state: core.State | None = None, into: core.Where | None = None,
          on_started: Callable[[], None] = lambda: None) -> core.Baked:
    with progress.stage("core", "records read by dnspython"):
        return core.bake(config, data_file, cache, progress.detail, lenient=lenient,
                         on_record=progress.tick, on_along=progress.along,
                         write_signed=write_signed, last_good=last_good, keep=keep,
                         state=state, into=into, on_started=on_started)


def _earlier(outdir: Path, state_file: Path) -> core.State:
    """This build's state, and the earlier build's, whose data is inside its server (the
    core copies the regions it can from there). A server whose data cannot be found: a full
    build."""
    server, span = earlier_server(outdir) or (None, None)
    return core.State(emit.temporary_for(state_file), state_file,
                      Path(server) if server is not None else None, span)


def check(config: ZoneSetConfig, lenient: bool = False,
          progress: Progress | None = None) -> list[Diagnostic]:
    """Every diagnostic of the set (raises CompileError on errors); writes nothing but a
    temporary file."""
    progress = progress or Progress(out=None)
    with tempfile.TemporaryDirectory(prefix="zonebake-check-") as scratch:
        fetched = _refresh(config, progress, None, Path(scratch))
        baked = _bake(fetched.config, Path(scratch) / emit.DATA_FILE, progress, lenient,
                      cache=False)
    return fetched.warnings + list(baked.warnings)


def _refresh(config: ZoneSetConfig, progress: Progress, only, staging: Path | None
             ) -> Refreshed:
    if not any(zone.primary for zone in config.zones):
        return Refreshed(config)
    from . import transfer  # dnspython's queries and transfers: only for zones with a primary
    with progress.stage("transfer", "zones asked of their primaries"):
        return transfer.refresh(config, only, staging)


def build(config: ZoneSetConfig, outdir: Path, lenient: bool = False,
          progress: Progress | None = None, write_signed: Path | None = None,
          keep_going: bool = False, fetched: Refreshed | None = None) -> Built:
    """Compile the zone set into OUTDIR/zonebake-server (its data inside) and
    OUTDIR/zonedata.{c,state}, over the earlier build there (the core's layout/reuse.c); with
    `write_signed`, the zones the build signs as zone files there too (signing.py); with
    `keep_going`, without its broken zones or with their last good copies (keepgoing.py).
    Zones with a primary are first transferred when it has a newer serial (transfer.py),
    unless `fetched` says what came of asking the primaries already."""
    progress = progress or Progress(out=None)
    if write_signed:
        signing.signed_files(config, write_signed)  # a usage error before anything is built
    fetched = fetched or _refresh(config, progress, None, None)
    config = fetched.config
    found = paths.status(outdir)
    created = isinstance(found, str)  # nothing there (or nothing to be told: mkdir says)
    if not created and not paths.is_dir(found):
        raise UsageError(f"{outdir}: not a directory (the output directory)")
    try:
        outdir.mkdir(parents=True, exist_ok=True)  # the core writes its data there
    except OSError as exc:  # a file on its way, a folder not to be written
        raise UsageError(f"{outdir}: cannot make the output directory: {exc.strerror}") \
            from None
    # One build at a time into it (toolchain/outdirlock.py): held already where the
    # command's start took it (core/early.py), before it began anything there.
    outdirlock.hold(outdir)
    driverless.forget(outdir)  # until this build is all in place
    try:
        return _into(config, outdir, created, fetched, progress, lenient, write_signed,
                     keep_going)
    finally:
        # What the command's start began there and no build took over (it failed first) is
        # stopped before the next build into OUTDIR may go on.
        prefill.stop_early()
        early_core.stop_early()
        outdirlock.release(outdir)


def _into(config: ZoneSetConfig, outdir: Path, created: bool, fetched: Refreshed,
          progress: Progress, lenient: bool, write_signed: Path | None,
          keep_going: bool) -> Built:
    """build()'s work in OUTDIR, which it holds (made by it where `created`)."""
    state_file = outdir / STATE_FILE
    state = _earlier(outdir, state_file)
    # The responder's own objects do not depend on the zones: on a first build they compile
    # meanwhile, mostly on the core the single-threaded stages leave idle. Nor does
    # zonedata.c (the layout's numbers are in the data): the server is compiled and linked
    # while the core runs, and the core writes the data into it (cc.EarlyServer). Both begin
    # once the core has started: their Python held the interpreter's lock while this thread
    # made its way to the core (5-10 ms of a rebuild). A core that has to be compiled first
    # (or a build that fails before) lets them go after CORE_STARTS.
    started = threading.Event()

    def once_started(work: Callable[[], T]) -> T:
        started.wait(CORE_STARTS)
        return work()

    with ThreadPoolExecutor(max_workers=3) as meanwhile:
        runtime = meanwhile.submit(once_started, cc.prepare_runtime)
        early: cc.EarlyServer | None = None

        def bake(current: ZoneSetConfig, last_good: dict[int, Path],
                 keep: dict[int, Path]) -> core.Baked:
            nonlocal early
            if early is not None:  # an earlier try's, with zones this one leaves out
                early.abandon()
            early = cc.EarlyServer(outdir, meanwhile, runtime, earlier=(
                (state.earlier_data, state.earlier_span)
                if state.earlier_data and state.earlier_span else None))
            early.start(lambda: once_started(lambda: emit.render(current)))
            return _bake(current, early.data_file, progress, lenient,
                         write_signed=signing.signed_files(current, write_signed)
                         if write_signed else None, last_good=last_good, keep=keep,
                         state=state, into=early.place, on_started=started.set)

        broken: list[Diagnostic] = []
        broken_zones: set[str] = set()
        try:
            if keep_going:
                baked, config, broken, broken_zones = keepgoing.build(config, outdir, bake)
            else:
                baked = bake(config, {}, {})
            assert early is not None
            early.data_written()
            with progress.stage("cc"):
                early.finish()  # the server, its data inside, in place of the last one
            outputs.put_state(state.out, state_file)
            outputs.put_image(state.image_out, outdir / IMAGE_FILE)
            # For the next build of this command line: its core begun before the imports.
            following = None if keep_going or write_signed else core.next_manifest(
                config, lenient, baked.core, _earlier(outdir, state_file))
            early_core.remember(outdir, baked.core, following)
        except BaseException as exc:
            state.out.unlink(missing_ok=True)
            state.image_out.unlink(missing_ok=True)
            if isinstance(exc, CompileError):  # why a zone is compiled from its last file
                exc.diagnostics[:0] = fetched.warnings
            if early is not None:
                early.abandon()
            if created:  # a set that does not compile leaves nothing behind
                shutil.rmtree(outdir, ignore_errors=True)
            raise
        with progress.stage("emit"):
            emit.write(outdir, config, early.zonedata_text)
        # An earlier version's copy of the data beside the server; the server's own is it.
        (outdir / emit.DATA_FILE).unlink(missing_ok=True)
    fetched.commit(broken_zones)
    replay = None
    if following is not None and early.linked_entry is not None and not fetched.warnings \
            and all(zone.dnssec is None for zone in config.zones):
        replay = driverless.Replay(str(early.linked_entry), str(baked.core),
                                   cc.compilers_run())
    return Built(fetched.warnings + list(baked.warnings), broken, replay)
