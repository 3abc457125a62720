"""The pipeline: run every stage in order and keep what each produced (tests inspect it)."""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .answers import NodeAnswers, build_answers
from .chaos import chaos_answers
from .config import ZoneSetConfig
from .errors import CompileError, Diagnostic, Position, UsageError
from .layout import Layout, pack
from .progress import Progress
from .wire import BodyTooLarge, NodeBodies, serialize_node
from . import cc, emit, native, replacing

if TYPE_CHECKING:
    from .phash import PerfectHash
    from .tree import NameTree


@dataclass
class Compiled:
    config: ZoneSetConfig
    warnings: list[Diagnostic]
    tree: NameTree
    answers: list[NodeAnswers]  # in perfect hash key order
    bodies: list[NodeBodies]  # likewise
    phash: PerfectHash
    layout: Layout


def compile_zoneset(config: ZoneSetConfig, lenient: bool = False,
                    progress: Progress | None = None) -> Compiled:
    """Everything up to the C source; raises CompileError with every error found."""
    # The pipeline makes millions of objects that live to its end, and no garbage cycles to
    # speak of: the cyclic collector's full passes went over all of them, up to 30 s each on
    # a 1M-name zone with no progress meanwhile (10.6 s with the earlier stages' objects
    # frozen). Off, the 100k-name zone compiles with the same peak memory (1080 MiB) in four
    # fifths of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run_stages(config, lenient, progress or Progress(out=None))
    finally:
        # Everything made meanwhile is still in the youngest generation, which the first
        # collection would go through whole (78 s on the 1M zone, in silence): moved to the
        # oldest (freeze, then unfreeze: two list splices), it is looked at only when that
        # generation's turn comes.
        gc.freeze()
        gc.unfreeze()
        if collecting:
            gc.enable()


def _run_stages(config: ZoneSetConfig, lenient: bool, progress: Progress) -> Compiled:
    # Imported when the pipeline runs: a build the native baker makes does without them,
    # and they were a tenth of a second of its start.
    from .parse import parse_zone
    from .phash import build_perfect_hash
    from .tree import build_tree
    from .validate import build_zone

    zones, warnings, errors = [], [], []
    with progress.stage("parse and check", "records"):
        for source in config.zones:
            try:
                progress.step("records read")
                parsed = parse_zone(source, progress.tick)
                zone, zone_warnings = build_zone(parsed, lenient, progress.each)
            except CompileError as exc:
                errors += exc.diagnostics
                continue
            zones.append(zone)
            warnings += zone_warnings
    if errors:
        raise CompileError(errors)

    with progress.stage("tree"):
        tree = build_tree(zones, progress.each)
    with progress.stage("answers", "names"):
        node_answers = build_answers(tree, config.server.minimal_responses,
                                     lambda nodes: progress.each(nodes, len(tree.nodes)))
    bodies = []
    with progress.stage("wire", "names"):
        for na in progress.each(node_answers, len(node_answers)):
            try:
                bodies.append(serialize_node(na))
            except BodyTooLarge as exc:
                # Name the node's first record, or else its zone's file.
                positions = [rrset.position for rrset in na.node.rrsets.values()]
                where = min(positions) if positions else Position(na.node.zone.source.display, 0)
                errors.append(Diagnostic(where, "error", str(exc)))
    if errors:
        raise CompileError(errors)
    with progress.stage("perfect hash"):
        phash = build_perfect_hash([b.key for b in bodies], each=progress.each)
    with progress.stage("layout"):
        layout = pack(bodies, phash, chaos_answers(config.server), progress.each)
    return Compiled(config, warnings, tree, node_answers, bodies, phash, layout)


@dataclass
class Built:
    warnings: list[Diagnostic]
    native: bool  # the native baker made the data (compiler/native.py)


def _bake(config: ZoneSetConfig, data_file: Path, progress: Progress, lenient: bool,
          cache: bool = True, on_plan: Callable[[native.Baked], None] = lambda _: None
          ) -> native.Baked | None:
    """The native baker's result, or None when the Python pipeline must do the work."""
    if native.mode() == "off":
        return None
    try:
        with progress.stage("native bake"):
            return native.bake(config, data_file, cache, progress.detail, on_plan, lenient)
    except native.Declined as exc:
        if native.mode() == "require":
            raise UsageError(f"the native baker declined: {exc}") from None
        return None
    except native.Failed as exc:
        if native.mode() == "require":
            raise
        # A bug of ours should not stop a user's build: the Python pipeline does it all.
        print(f"zonebake: warning: {exc}; compiling with the Python pipeline instead",
              file=sys.stderr)
        return None


def _drop_cached(path: Path) -> None:
    """Drop the last build's data from the page cache as this build starts (hundreds of MiB
    for a large set; nothing reads the file but a manual build): its memory then serves this
    build, which on a VM is much quicker than memory the kernel has not handed out lately.
    The binary's pages stay: the running server may still need them."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


def check(config: ZoneSetConfig, lenient: bool = False,
          progress: Progress | None = None) -> list[Diagnostic]:
    """Every diagnostic of the set (raises CompileError on errors); writes nothing but a
    temporary file."""
    progress = progress or Progress(out=None)
    with tempfile.TemporaryDirectory(prefix="zonebake-check-") as scratch:
        baked = _bake(config, Path(scratch) / emit.DATA_FILE, progress, lenient, cache=False)
        if baked is not None:
            return list(baked.warnings)
    return compile_zoneset(config, lenient, progress).warnings


def build(config: ZoneSetConfig, outdir: Path, lenient: bool = False,
          progress: Progress | None = None) -> Built:
    """Compile the zone set into OUTDIR/zonedata.{bin,c} and OUTDIR/zonebake-server."""
    progress = progress or Progress(out=None)
    created = not outdir.exists()
    outdir.mkdir(parents=True, exist_ok=True)  # the baker writes its data there
    data_file = outdir / emit.DATA_FILE
    temporary = emit.temporary_for(data_file)
    # The responder's own objects do not depend on the zones: on a first build they compile
    # meanwhile, mostly on the core the single-threaded stages leave idle.
    # The baker gives the layout's numbers before it writes the data: the server is compiled
    # and linked meanwhile, and the data spliced in once it is written.
    with ThreadPoolExecutor(max_workers=3) as meanwhile:
        runtime = meanwhile.submit(cc.prepare_runtime)
        meanwhile.submit(_drop_cached, data_file)
        early = cc.EarlyServer(outdir, meanwhile, runtime)
        try:
            baked = _bake(config, temporary, progress, lenient, on_plan=lambda baked: early.start(
                emit.render(config, baked.layout, baked.max_labels)))
            if baked is not None:
                # The last build's data, hundreds of MiB for a large set, is freed while the
                # server compiles: freeing its pages took a quarter of a second.
                old = replacing.replace(temporary, data_file)
                if old is not None:
                    meanwhile.submit(os.close, old)
                early.data_written()
                layout, max_labels = baked.layout, baked.max_labels
                warnings = list(baked.warnings)
            else:
                early.abandon()
                compiled = compile_zoneset(config, lenient, progress)
                layout, max_labels = compiled.layout, compiled.tree.max_labels
                warnings = compiled.warnings
        except BaseException:
            early.abandon()
            if created:  # a set that does not compile leaves nothing behind
                shutil.rmtree(outdir, ignore_errors=True)
            raise
        with progress.stage("emit"):
            zonedata = emit.write(outdir, config, layout, max_labels, early.zonedata_text)
        with progress.stage("cc"):
            if early.future is not None:
                early.finish()
            else:
                runtime.result()
                cc.compile_server(zonedata, outdir / "zonebake-server")
    return Built(warnings, baked is not None)
