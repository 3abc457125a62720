"""The native baker against the Python pipeline on one zone set, in this process: both refuse
it with the same diagnostics, or both compile it with the same warnings and the baker's
zonedata.bin is the pipeline's, byte for byte."""

from __future__ import annotations

from pathlib import Path

from zonebake import native
from zonebake.build import compile_zoneset
from zonebake.config import ZoneSetConfig
from zonebake.errors import CompileError


def bake_as_the_pipeline(config: ZoneSetConfig, data_file: Path) -> str:
    """'declined' (the reason must be given), 'refused', 'warned' or 'baked'; asserts the
    rest."""
    try:
        baked = native.bake(config, data_file)  # a failure of the baker raises native.Failed
    except native.Declined as why:
        assert str(why), "a decline says why"
        return "declined"
    except CompileError as refused:
        try:
            compiled = compile_zoneset(config)
        except CompileError as exc:
            assert [str(d) for d in refused.diagnostics] == [str(d) for d in exc.diagnostics]
            return "refused"
        raise AssertionError(f"the baker refused a set the pipeline compiles: {refused}")
    try:
        compiled = compile_zoneset(config)
    except CompileError as exc:
        raise AssertionError(f"the baker accepted a set the pipeline refuses: {exc}") from None
    assert [str(d) for d in baked.warnings] == [str(d) for d in compiled.warnings]
    assert data_file.read_bytes() == compiled.layout.data
    return "warned" if baked.warnings else "baked"
