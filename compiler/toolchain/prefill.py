"""The earlier build's data copied into the next server's file, where it lay in the earlier
server, on a thread of its own from the moment a build begins (elfsplice.prefill): where the
new data goes to the same place, the core writes only what differs (its layout.c), and the
copy (250 MB at a million names) runs while the interpreter starts and the core reads,
instead of after the layout.

The `zonebake` command starts it before the driver's imports (entry.py), as soon as its
command line names an output directory that holds a build; the build's EarlyServer (cc.py)
takes it over, or starts one of its own. One that no build took over is stopped and its
file removed before the command exits (`stop_early`)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from . import elfsplice, outdirlock

# An output directory's server, and the state beside it that the next build reads (build.py).
SERVER_FILE = "zonebake-server"
STATE_FILE = "zonedata.state"


def temporary_for(output: Path) -> Path:
    """Where the server is written before it takes OUTPUT's name (cc.compile_server)."""
    return output.with_name(f".{output.name}.tmp")


class Prefill:
    """SERVER's data, where `span` says it lies, being copied into TEMPORARY."""

    def __init__(self, server: Path, span: tuple[int, int], temporary: Path, source: int,
                 destination: int) -> None:
        self.server, self.span, self.temporary = server, span, temporary
        self._copied = False
        self._thread = threading.Thread(target=self._copy, args=(source, destination),
                                        name="prefill", daemon=True)
        self._thread.start()

    def _copy(self, source: int, destination: int) -> None:
        try:
            # Needed only once the core has laid the data out: the core and the driver's
            # imports, which the build waits for, come first.
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass
        try:
            elfsplice.prefill(source, destination, self.span)
            self._copied = True
        except OSError:
            pass  # elfsplice.prepare makes the file again
        finally:
            os.close(source)
            os.close(destination)

    def done(self) -> tuple[int, int] | None:
        """Once the copy is over: the span copied, or None."""
        self._thread.join()
        return self.span if self._copied else None

    def stop(self) -> None:
        """No build writes the file: it goes."""
        self._thread.join()
        self.temporary.unlink(missing_ok=True)


def earlier_server(outdir: Path) -> tuple[Path, tuple[int, int]] | None:
    """OUTDIR's server and where its data lies, where OUTDIR holds a build the next one can
    build over: its state, and a server whose data elfsplice finds."""
    server = outdir / SERVER_FILE
    try:  # a name too long, a folder not to be searched: no earlier build (the build says)
        if not (outdir / STATE_FILE).is_file():
            return None
    except OSError:
        return None
    try:
        return server, elfsplice.span(server)
    except (elfsplice.Refused, OSError):
        return None


def start(server: Path, span: tuple[int, int], temporary: Path) -> Prefill | None:
    try:
        source = os.open(server, os.O_RDONLY)
    except OSError:
        return None
    try:
        destination = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        os.close(source)
        return None
    return Prefill(server, span, temporary, source, destination)


_early: dict[Path, Prefill] = {}


def start_early(outdir: Path) -> None:
    """For the command line's output directory, before anything else is read or imported:
    where it holds a build (its state, and a server whose data elfsplice finds), the copy
    begins."""
    outdirlock.hold(outdir)  # before its temporary file is made (entry.py took it first)
    earlier = earlier_server(outdir)
    if earlier is None:
        return
    server, span = earlier
    prefill = start(server, span, temporary_for(server))
    if prefill is not None:
        _early[outdir.absolute()] = prefill


def take(outdir: Path, server: Path, span: tuple[int, int]) -> Prefill | None:
    """The copy begun early for OUTDIR, if it is of SERVER's data at `span` (the build found
    what the command line did); else None, and any such copy stopped."""
    prefill = _early.pop(outdir.absolute(), None)
    if prefill is not None and (prefill.server.absolute(), prefill.span) != \
            (server.absolute(), span):
        prefill.stop()
        return None
    return prefill


def pending(outdir: str | os.PathLike[str]) -> Prefill | None:
    """The copy begun early for OUTDIR, where nothing took it yet."""
    return _early.get(Path(outdir).absolute())


def taken(outdir: str | os.PathLike[str]) -> None:
    """The copy begun early for OUTDIR is used (core/driverless.py): not stopped at the end."""
    _early.pop(Path(outdir).absolute(), None)


def stop_early() -> None:
    """Before the command exits: each copy no build took over (it failed first)."""
    while _early:
        _early.popitem()[1].stop()
