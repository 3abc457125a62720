"""A rebuild without the driver.

A rebuild of a plain zone set of 200,000 names takes the core some 35 ms; the driver's
imports, its reading of the configuration, its checks of the cache and its putting the
outputs in place take as long again. Where nothing the driver reads has changed since the
last build into the output directory, it would give the core the manifest the command began
it on (early.py) and put the same outputs in place around the same linked server: this
module does that itself at the command's start (entry.py), and the driver is not imported.

What the driver reads besides the zone files, which the core reads itself: the command line,
the working directory and SOURCE_DATE_EPOCH (early.py compares them); the environment; the
TOML; the zonebake package with the responder's sources, and the interpreter; the C compiler
and assembler PATH finds; the core's program; the server linked with a placeholder for its
data in the cache, and the system files its link read (objcache.py's entry). The driver
records them beside the outputs (`record`, RECORD_FILE): the environment by a digest, each
file by its identity and times, as objcache.py's `seen` keeps them (a file written, or one
renamed over it, changes its change time, which no one can set back). A file changed within
RACY seconds of the record could keep its times: then there is no record. Of the outputs,
the core checks the earlier state, image and data against each other as ever, the server
around the data is written from the linked one, and zonedata.c, which the driver would write
again, is checked by its digest.

Only what the driver would do the same is done here: sets without a zone the build signs or
one with a primary, built without --keep-going or --write-signed (others leave no record).
What the driver alone handles (signatures to verify: a zone given signed; a zone the fast
reader declines; errors, which the driver reports; a core that fails) gives the build to the
driver, which runs a core of its own: the early core is stopped, and where it had begun
writing into the server's file, the copy of the earlier data there is made again."""

from __future__ import annotations

import os
import sys
import time

from . import early as early_core
from ..toolchain import prefill

RECORD_FILE = "zonedata.driverless"
MAGIC = "zonebake driverless 1"
RACY = 2.0  # seconds (objcache.py's): a file changed as recently as this has no record
# Set by a shell as it runs a command, changing nothing the build reads.
UNREAD_ENVIRONMENT = ("OLDPWD", "SHLVL", "_")
# zonedata.c, which the driver renders from the configuration and writes on every build (the
# record holds its digest: no one edits it unseen), and the data of an older version beside
# the server (emit.py's DATA_FILE), which the driver removes.
ZONEDATA_C, DATA_FILE = "zonedata.c", "zonedata.bin"
EXIT_OK = 0


def _digest(parts: list[str]) -> str:
    try:  # hashlib's OpenSSL took 6 ms to import
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    digest = blake2b(digest_size=20)
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def _environment() -> str:
    return _digest([f"{name}={value}" for name, value in sorted(os.environ.items())
                    if name not in UNREAD_ENVIRONMENT])


def _identity(path: str) -> str:
    """PATH's device, inode, size, modification and change times and mode; "-": none."""
    try:
        found = os.stat(path)
    except OSError:
        return "-"
    return (f"{found.st_dev} {found.st_ino} {found.st_size} {found.st_mtime_ns} "
            f"{found.st_ctime_ns} {found.st_mode}")


def _which(command: str) -> str | None:
    """shutil.which(COMMAND) on POSIX, without the imports of shutil, which took 6 ms of the
    processors the early core works on: COMMAND where it names a folder, else the first of
    the folders PATH names (the system's default where it is unset) that holds an
    executable file of that name."""
    def executable(path: str) -> bool:
        return os.path.exists(path) and os.access(path, os.F_OK | os.X_OK) and \
            not os.path.isdir(path)

    if os.path.dirname(command):
        return command if executable(command) else None
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    seen = set()
    for folder in path.split(os.pathsep) if path else ():  # PATH="": nowhere
        if folder not in seen:
            seen.add(folder)
            if executable(os.path.join(folder, command)):
                return os.path.join(folder, command)
    return None


def _resolved(command: str) -> str:
    """Where PATH finds COMMAND, links followed, as cc.py's compiler_identity asks."""
    return os.path.realpath(_which(command) or command)


class Replay:
    """What the driver of a build hands `record`: the server linked with a placeholder for its
    data (a cache entry's), the core's program, and the compilers cc.py ran."""

    def __init__(self, linked: str, core: str, compilers: list[str]) -> None:
        self.linked, self.core, self.compilers = linked, core, compilers


def _package_files() -> list[str]:
    """The zonebake package's folders and files, and the responder's sources where they lie
    beside it (a checkout), but for compiled bytecode."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots = [package]
    beside = os.path.join(os.path.dirname(package), "runtime")
    if os.path.isfile(os.path.join(beside, "zonedata.h")):
        roots.append(beside)
    found = []
    for root in roots:
        for folder, folders, files in os.walk(root):
            folders[:] = sorted(name for name in folders if name != "__pycache__")
            found.append(folder)
            found += [os.path.join(folder, name) for name in sorted(files)]
    return found


def _linked_inputs(linked: str) -> list[str]:
    """The linked server, the entry's manifest and every file it names (objcache.py)."""
    entry = os.path.dirname(linked)
    manifest = os.path.join(entry, "manifest")
    with open(manifest, encoding="utf-8") as file:
        named = [line.split(" ", 1)[1] for line in file.read().splitlines()]
    return [linked, manifest, *(os.path.join(entry, path) for path in named)]


def forget(outdir: str | os.PathLike[str]) -> None:
    """No rebuild without the driver until a build records one again: at the start of every
    build by the driver."""
    try:
        os.unlink(os.path.join(outdir, RECORD_FILE))
    except OSError:  # none; or not to be removed, and then of inputs no longer there
        pass


def record(outdir: str | os.PathLike[str], replay: Replay, config: str | None,
           quiet: bool) -> None:
    """After a build into OUTDIR by the driver, all of it in place: what it read, for a
    rebuild without it (`rebuild`). CONFIG: the TOML it read, if it read one."""
    cc = []
    inputs = [os.path.abspath(config)] if config is not None else []
    inputs += [*_package_files(), os.path.realpath(sys.executable), replay.core]
    try:
        inputs += _linked_inputs(replay.linked)
    except (OSError, UnicodeError, IndexError):
        return
    for command in replay.compilers:
        cc.append((command, _resolved(command)))
        inputs.append(cc[-1][1])
    now = time.time_ns()
    lines = [MAGIC, f"quiet {int(quiet)}", f"environment {_environment()}",
             f"linked {replay.linked}"]
    lines += [f"which {command}\t{path}" for command, path in cc]
    for path in inputs:
        identity = _identity(path)
        fields = identity.split()
        if identity == "-" or max(int(fields[3]), int(fields[4])) > now - RACY * 1e9:
            return  # gone, or changed too recently to be told from a later change
        lines.append(f"input {identity}\t{path}")
    _write(outdir, lines)


def _zonedata_c(outdir: str | os.PathLike[str]) -> str:
    """The digest of OUTDIR's zonedata.c; "-": none."""
    try:
        with open(os.path.join(outdir, ZONEDATA_C), encoding="ascii") as file:
            return _digest([file.read()])
    except (OSError, UnicodeError):
        return "-"


def _write(outdir: str | os.PathLike[str], lines: list[str],
           freed: list[int | None] | None = None) -> None:
    """The record: LINES, then zonedata.c's digest. FREED: as replacing.put_releasing has it."""
    lines = [*lines, f"zonedata.c {_zonedata_c(outdir)}", "end", ""]
    if any("\n" in line for line in lines[:-1]):
        return
    from ..toolchain import replacing
    replacing.put_text(os.path.join(outdir, RECORD_FILE), "\n".join(lines), freed)


class _Record:
    """A record whose inputs and outputs are all as it says: what a rebuild needs of it."""

    def __init__(self, lines: list[str], quiet: bool, linked: str) -> None:
        self.lines, self.quiet, self.linked = lines, quiet, linked


def _unchanged(outdir: str) -> _Record | None:
    """OUTDIR's record, where everything it names is as it says; else None."""
    try:
        with open(os.path.join(outdir, RECORD_FILE), encoding="utf-8",
                  errors="surrogateescape") as file:
            lines = file.read().split("\n")
    except OSError:
        return None
    if len(lines) < 5 or lines[0] != MAGIC or lines[-2:] != ["end", ""] or \
            lines[2] != f"environment {_environment()}" or \
            not lines[3].startswith("linked "):
        return None
    kept = lines[:4]
    if lines[-3] != f"{ZONEDATA_C} {_zonedata_c(outdir)}" or lines[-3].endswith(" -"):
        return None
    for line in lines[4:-3]:
        kind, _, rest = line.partition(" ")
        value, _, path = rest.partition("\t")
        if kind == "which":
            if _resolved(value) != path:
                return None
            kept.append(line)
        elif kind == "input":
            if _identity(path) != value:
                return None
            kept.append(line)
        else:
            return None
    return _Record(kept, lines[1] == "quiet 1", lines[3].removeprefix("linked "))


def rebuild(outdir: str, started: float) -> int | None:
    """The rebuild of OUTDIR by the core begun early, without the driver, where its record
    says nothing the driver reads has changed: the exit status. None: the driver builds (the
    early core and the copy of the earlier data left to it where they are of use still).
    STARTED: when the command began (time.monotonic)."""
    begun, copy = early_core.pending(), prefill.pending(outdir)
    if begun is None or copy is None:
        return None
    found = _unchanged(outdir)
    state, image = begun.written("state"), begun.written("image")
    if found is None or state is None or image is None:
        return None
    return _Rebuild(outdir, begun, copy, found, state, image, started).run()


class Fallback(Exception):
    """The driver builds instead."""


class _Rebuild:
    def __init__(self, outdir: str, begun: early_core.Early, copy: prefill.Prefill,
                 found: _Record, state: tuple[str, str], image: tuple[str, str],
                 started: float) -> None:
        self.outdir, self.begun, self.copy, self.found = outdir, begun, copy, found
        self.started = started
        self.wrote_server = False  # the core was given the server's file
        self.linked = None  # elfsplice.Linked of the record's linked server, read in `run`
        self.state_out, self.state_file = state
        self.image_out, self.image_file = image

    def run(self) -> int | None:
        early_core.take()
        process = self.begun.adopt(self.begun.program, self.begun.manifest)
        assert process is not None
        # Imported, and the linked server read, while the core works.
        from .. import progress as progressing
        from ..toolchain import elfsplice, replacing
        from . import outputs
        try:
            self.linked = elfsplice.Linked(self.found.linked)
        except (elfsplice.Refused, OSError):
            self.linked = None  # the driver says why
        progress = progressing.Progress(out=None if self.found.quiet else sys.stderr)
        progress.started = self.started
        diagnostics = []
        freed: list[int | None] = []  # the old outputs' files, released together at the end
        try:
            with progress.stage("core", "records read by dnspython"):
                progress.detail("begun before the driver", 0.0, 1, "core")
                self._core(process, progress, diagnostics)
            with progress.stage("cc"):
                prefill.taken(self.outdir)
                replacing.put_releasing(self.copy.temporary, self.copy.server, freed)
            outputs.put_state(self.state_out, self.state_file, freed)
            outputs.put_image(self.image_out, self.image_file, freed)
            with progress.stage("emit"):  # zonedata.c is as the record says
                try:
                    os.unlink(os.path.join(self.outdir, DATA_FILE))
                except FileNotFoundError:
                    pass
        except (Fallback, OSError):  # the core's pipe broken, an output not to be written
            replacing.release(*freed)
            self._stop()
            return None
        finally:
            self.begun.remove_scratch()
        _write(self.outdir, self.found.lines, freed)
        replacing.release(*freed)
        if diagnostics:
            from .. import errors
            errors.print_all([errors.from_core(line)[1] for line in diagnostics])
        progress.finish()
        return EXIT_OK

    def _core(self, process: early_core.Process, progress, diagnostics: list[str]) -> None:
        """The core's reports (run.py's _run_once), to its `done`."""
        from ..progress import core_phase  # imported by now
        for line in process.stderr:
            if line == "done\n":
                return
            if line.startswith("phase "):
                progress.detail(*core_phase(line))
            elif line.startswith("diag "):
                diagnostics.append(line)
            elif line.startswith("layout "):
                process.stdin.write(self._place(int(line.split()[1])))
                process.stdin.flush()
            elif not line.startswith("signatures 0 "):  # signatures to verify: the driver's
                raise Fallback
        # A sanitized core says no `done`: its exit says, after its checks.
        if process.wait() != 0 or not self.wrote_server:
            raise Fallback  # it failed, or wrote elsewhere: the driver says why

    def _place(self, size: int) -> str:
        """The answer to the core's `layout SIZE`, as cc.py's EarlyServer.place gives it."""
        from ..toolchain import elfsplice
        prefilled = self.copy.done()
        self.wrote_server = True
        placed = elfsplice.prepare_for_core(self.linked, self.copy.temporary, size,
                                            prefilled) if self.linked is not None else None
        if placed is None:
            raise Fallback
        return f"into {placed[0]} {placed[1]} {self.copy.temporary}\n"

    def _stop(self) -> None:
        """The early core stopped, what it began removed (run.py's _stop_early), and the copy
        of the earlier data made again where the core wrote into it."""
        self.begun.stop()
        for path in (self.state_out, self.image_out):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        if self.wrote_server:
            prefill.stop_early()
