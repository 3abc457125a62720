"""The core's state and image of a build put in place of the last build's, once the server
holding the data they describe is: by the driver (build.py) and by a rebuild without it
(driverless.py)."""

from __future__ import annotations

import os

from ..toolchain import replacing


def put_state(new: str | os.PathLike[str], path: str | os.PathLike[str],
              freed: list[int | None] | None = None) -> None:
    """The core's state NEW at PATH. After the data it describes: a state left over from a
    build cut off between the two renames does not match the data, and the next build builds
    in full. Exchanged: os.replace over the last state (32 MiB at a million names) waited for
    the new one's blocks to be written. FREED: as replacing.put_releasing has it."""
    replacing.put_releasing(new, path, freed)


def put_image(new: str | os.PathLike[str], path: str | os.PathLike[str],
              freed: list[int | None] | None = None) -> None:
    """The core's image NEW of this build's zone written whole, in place of the last one; an
    empty one: none (the core keeps none of this set). Where the core wrote none, it brought
    the last one up to date in place."""
    try:
        size = os.stat(new).st_size
    except FileNotFoundError:
        return
    if size == 0:
        os.unlink(new)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    put_state(new, path, freed)
