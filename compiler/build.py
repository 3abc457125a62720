"""The pipeline: run every stage in order and keep what each produced (tests inspect it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .answers import NodeAnswers, build_answers
from .chaos import chaos_answers
from .config import ZoneSetConfig
from .errors import CompileError, Diagnostic, Position
from .layout import Layout, pack
from .parse import parse_zone
from .phash import PerfectHash, build_perfect_hash
from .tree import NameTree, build_tree
from .validate import build_zone
from .wire import BodyTooLarge, NodeBodies, serialize_node
from . import cc, emit


@dataclass
class Compiled:
    config: ZoneSetConfig
    warnings: list[Diagnostic]
    tree: NameTree
    answers: list[NodeAnswers]  # in perfect hash key order
    bodies: list[NodeBodies]  # likewise
    phash: PerfectHash
    layout: Layout


def compile_zoneset(config: ZoneSetConfig, lenient: bool = False) -> Compiled:
    """Everything up to the C source; raises CompileError with every error found."""
    zones, warnings, errors = [], [], []
    for source in config.zones:
        try:
            zone, zone_warnings = build_zone(parse_zone(source), lenient)
        except CompileError as exc:
            errors += exc.diagnostics
            continue
        zones.append(zone)
        warnings += zone_warnings
    if errors:
        raise CompileError(errors)

    tree = build_tree(zones)
    node_answers = build_answers(tree, config.server.minimal_responses)
    bodies = []
    for na in node_answers:
        try:
            bodies.append(serialize_node(na))
        except BodyTooLarge as exc:
            # Name the node's first record, or else its zone's file.
            positions = [rrset.position for rrset in na.node.rrsets.values()]
            where = min(positions) if positions else Position(na.node.zone.source.display, 0)
            errors.append(Diagnostic(where, "error", str(exc)))
    if errors:
        raise CompileError(errors)
    phash = build_perfect_hash([b.key for b in bodies])
    # Order nodes by their key index in the hash (identity here: keys were given in order).
    layout = pack(bodies, phash, chaos_answers(config.server))
    return Compiled(config, warnings, tree, node_answers, bodies, phash, layout)


def build(config: ZoneSetConfig, outdir: Path, lenient: bool = False) -> Compiled:
    """Compile the zone set into OUTDIR/zonedata.c and OUTDIR/zonebake-server."""
    compiled = compile_zoneset(config, lenient)
    outdir.mkdir(parents=True, exist_ok=True)
    zonedata = outdir / "zonedata.c"
    emit.write_atomically(zonedata, emit.render(config, compiled.layout,
                                                compiled.tree.max_labels))
    cc.compile_server(zonedata, outdir / "zonebake-server")
    return compiled
