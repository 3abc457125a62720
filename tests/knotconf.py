"""The knotd configuration both the differential tests and the benchmark start Knot with:
everything in one work directory, zones loaded whole from their files and never written back,
semantic checks off (the zones under test are checked by zonebake itself)."""

from __future__ import annotations

from pathlib import Path


def knot_config(workdir: Path, port: int, zones: list[tuple[str, Path]],
                server_extra: str = "", template_extra: str = "") -> str:
    zone_lines = "".join(f'  - domain: "{origin}"\n    file: "{Path(path).resolve()}"\n'
                         for origin, path in zones)
    return f"""server:
    rundir: "{workdir}"
    listen: 127.0.0.1@{port}
{server_extra}log:
  - target: stderr
    any: error
database:
    storage: "{workdir / 'db'}"
template:
  - id: default
    zonefile-load: whole
    zonefile-sync: -1
    journal-content: none
    semantic-checks: off
{template_extra}zone:
{zone_lines}"""
