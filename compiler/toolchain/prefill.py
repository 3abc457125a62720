"""The earlier build's data copied into the next server's file, where it lay in the earlier
server, on a thread of its own from the moment a build begins (elfsplice.prefill): where the
new data goes to the same place, the core writes only what differs (its layout.c), and the
copy (250 MB at a million names) runs while the interpreter starts and the core reads,
instead of after the layout.

The `zonebake` command starts it before the driver's imports (entry.py), as soon as its
command line names an output directory that holds a build; the build's EarlyServer (cc.py)
takes it over, or starts one of its own. One that no build took over is stopped and its
file removed before the command exits (`stop_early`).

Imported at the command's start, while the core it began works beside it on two processors
(a rebuild without the driver, core/driverless.py, has nothing else to do then): paths as
strings and a thread of _thread's, not pathlib's and threading's imports (9 ms)."""

from __future__ import annotations

import _thread
import os

from . import elfsplice, outdirlock

# An output directory's server, and the state beside it that the next build reads (build.py).
SERVER_FILE = "zonebake-server"
STATE_FILE = "zonedata.state"


def temporary_for(output: str | os.PathLike[str]) -> str:
    """Where the server is written before it takes OUTPUT's name (cc.compile_server)."""
    folder, name = os.path.split(os.fspath(output))
    return os.path.join(folder, f".{name}.tmp")


class Prefill:
    """SERVER's data, where `span` says it lies, being copied into TEMPORARY."""

    def __init__(self, server: str, span: tuple[int, int], temporary: str, source: int,
                 destination: int) -> None:
        self.server, self.span, self.temporary = server, span, temporary
        self._copied = False
        self._over = _thread.allocate_lock()  # held until the copy is over
        self._over.acquire()
        try:
            _thread.start_new_thread(self._copy, (source, destination))
        except BaseException:
            os.close(source)
            os.close(destination)
            self._over.release()
            raise

    def _copy(self, source: int, destination: int) -> None:
        try:
            # Needed only once the core has laid the data out: the core and the driver's
            # imports, which the build waits for, come first.
            os.setpriority(os.PRIO_PROCESS, _thread.get_native_id(), 19)
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
            self._over.release()

    def _join(self) -> None:
        with self._over:
            pass

    def done(self) -> tuple[int, int] | None:
        """Once the copy is over: the span copied, or None."""
        self._join()
        return self.span if self._copied else None

    def stop(self) -> None:
        """No build writes the file: it goes."""
        self._join()
        try:
            os.unlink(self.temporary)
        except FileNotFoundError:
            pass


def earlier_server(outdir: str | os.PathLike[str]) -> tuple[str, tuple[int, int]] | None:
    """OUTDIR's server and where its data lies, where OUTDIR holds a build the next one can
    build over: its state, and a server whose data elfsplice finds."""
    server = os.path.join(outdir, SERVER_FILE)
    try:  # a name too long, a folder not to be searched: no earlier build (the build says)
        if not os.path.isfile(os.path.join(outdir, STATE_FILE)):
            return None
    except OSError:
        return None
    try:
        return server, elfsplice.span(server)
    except (elfsplice.Refused, OSError):
        return None


def start(server: str | os.PathLike[str], span: tuple[int, int],
          temporary: str | os.PathLike[str]) -> Prefill | None:
    try:
        source = os.open(server, os.O_RDONLY)
    except OSError:
        return None
    try:
        destination = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        os.close(source)
        return None
    try:
        return Prefill(os.fspath(server), span, os.fspath(temporary), source, destination)
    except RuntimeError:  # no thread to be had: the build copies what it needs itself
        os.unlink(temporary)
        return None


_early: dict[str, Prefill] = {}  # by the output directory's absolute path


def start_early(outdir: str) -> None:
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
        _early[os.path.abspath(outdir)] = prefill


def take(outdir: str | os.PathLike[str], server: str | os.PathLike[str],
         span: tuple[int, int]) -> Prefill | None:
    """The copy begun early for OUTDIR, if it is of SERVER's data at `span` (the build found
    what the command line did); else None, and any such copy stopped."""
    prefill = _early.pop(os.path.abspath(outdir), None)
    if prefill is not None and (os.path.abspath(prefill.server), prefill.span) != \
            (os.path.abspath(server), span):
        prefill.stop()
        return None
    return prefill


def pending(outdir: str | os.PathLike[str]) -> Prefill | None:
    """The copy begun early for OUTDIR, where nothing took it yet."""
    return _early.get(os.path.abspath(outdir))


def taken(outdir: str | os.PathLike[str]) -> None:
    """The copy begun early for OUTDIR is used (core/driverless.py): not stopped at the end."""
    _early.pop(os.path.abspath(outdir), None)


def stop_early() -> None:
    """Before the command exits: each copy no build took over (it failed first)."""
    while _early:
        _early.popitem()[1].stop()
