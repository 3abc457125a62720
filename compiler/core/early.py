"""The core begun before the driver's imports.

A rebuild's core takes a tenth of a second at a million names; the interpreter and the
driver's imports took half as long again before it started. So a `zonebake build` records in
its output directory the manifest the next build of the same command would give the core
(NEXT_FILE, written by build.py: run.next_manifest), with its scratch directory, its time
and the output directory left as placeholders. Where the next command's line (but for the
output directory) and working directory are that build's, the command starts the core on it
at once (entry.py, before anything else is imported), told to hold before it asks the
driver anything (the core's hold_for_driver): where the data goes, at the end of its work.
The driver makes its own manifest as ever (run.bake), in that scratch directory and with
that time, and takes the core over where the two are the same text for the same core's
program: it says `go`. Otherwise it kills the early core and starts its own; what the early
one wrote (its state and image under their temporary names, removed, and the earlier image
updated in place, which no state matches then) costs the next core a reading of the zone
file whole, no more.

Imported by entry.py before the driver: the standard library's lightest modules only."""

from __future__ import annotations

import os
import time

from ..toolchain import outdirlock
from ..toolchain.cachehome import may_hold_core

NEXT_FILE = "zonedata.next"
MAGIC = "zonebake next-manifest 3"
# What a build's manifest depends on besides its command line and working directory: the
# signing time (dnssec/signing.py's build_time), where a zone is signed.
EPOCH = "SOURCE_DATE_EPOCH"
# What a recorded manifest holds in place of the build's scratch directory, its time and its
# output directory (in the command line too: a build over a copy of the output directory,
# elsewhere, is begun early as well); none can be in a path or a manifest's line.
SCRATCH = "\0scratch"
NOW = "\0now"
OUT = "\0out"


# The manifest's lines that the lines after them go with (the core's main.c), and of those
# the ones that name a file the core writes (empty: none), the earlier image updated in
# place among them.
FOLLOWED = {"signatures": 2, "signing": 3, "zone": 3, "chaos": 2, "state": 4, "image": 2}
WRITTEN = {"signatures": (0,), "signing": (0,), "state": (0,), "image": (0, 1)}


def _core_name(name: str) -> bool:
    """Whether NAME is that of a core's program as program.py names it: core-, then 16
    lowercase hexadecimal digits."""
    digits = name.removeprefix("core-")
    return len(name) == 21 and len(digits) == 16 and all(c in "0123456789abcdef"
                                                         for c in digits)


def _runnable(program: str, template: str) -> bool:
    """Whether the command may run what NEXT_FILE says, which the output directory holds,
    wherever that came from: the core's program as program.py keeps it in this user's
    cache, and a manifest that has it write its files in the output or the scratch
    directory only (no records read, no signed zone written)."""
    folder = os.path.dirname(program)
    if not _core_name(os.path.basename(program)) or not may_hold_core(folder):
        return False
    for path in (folder, program):  # this user's, written by no one else
        try:
            found = os.stat(path)
        except OSError:
            return False
        if found.st_uid != os.getuid() or found.st_mode & 0o022:
            return False
    lines = template.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(("records ", "keep-records ", "write-signed ")):
            return False
        for k in WRITTEN.get(line, ()):
            target = lines[i + 1 + k] if i + 1 + k < len(lines) else ""
            if target and (not target.startswith((OUT + "/", SCRATCH + "/")) or
                           "/../" in target or target.endswith("/..")):
                return False
        i += 1 + FOLLOWED.get(line, 0)
    return True


def _keyed(args: list[str], out: str) -> list[str]:
    """ARGS with the output directory OUT, as -o gives it, in OUT's place."""
    return [OUT if arg == out else arg[:-len(out)] + OUT
            if arg in (f"-o{out}", f"--output={out}") else arg for arg in args]


# glibc's malloc on transparent huge pages (glibc 2.35 and later; others ignore it): a
# rebuild's core faults in its fresh arrays (hundreds of megabytes at a million names) a
# 4 KiB page at a time otherwise, 3 ms of the 33 ms a 200,000-name rebuild's core takes.
# Rebuilds only (this core): a full build's peak memory would round up to 2 MiB per array.
TUNABLES = "GLIBC_TUNABLES"
HUGE_PAGES = "glibc.malloc.hugetlb=1"


def _environment() -> dict[str, str]:
    """The early core's environment: this one's, its malloc on huge pages unless the
    user's GLIBC_TUNABLES says how."""
    tunables = os.environ.get(TUNABLES, "")
    if "glibc.malloc.hugetlb=" in tunables:
        return dict(os.environ)
    return {**os.environ, TUNABLES: f"{tunables}:{HUGE_PAGES}" if tunables else HUGE_PAGES}


class Process:
    """The early core's process, as the driver uses a subprocess.Popen of the core's (run.py):
    its input and its standard error as text, kill, wait, poll. Started by os.posix_spawn:
    subprocess and what it imports took 3 ms before the core could start."""

    def __init__(self, program: str, args: list[str]) -> None:
        core_reads, we_write = os.pipe()
        we_read, core_writes = os.pipe()
        try:
            self.pid = os.posix_spawn(program, [program, *args], _environment(), file_actions=[
                (os.POSIX_SPAWN_DUP2, core_reads, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_DUP2, core_writes, 2)])
        except BaseException:
            for fd in (we_write, we_read):
                os.close(fd)
            raise
        finally:
            os.close(core_reads)
            os.close(core_writes)
        self.stdin = open(we_write, "w")  # text, as Popen's: the locale's encoding
        self.stderr = open(we_read)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere, as Popen takes it
                pid, status = self.pid, 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is None:
                try:
                    status = os.waitpid(self.pid, 0)[1]
                except ChildProcessError:
                    status = 0
                self.returncode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() > deadline:
                raise TimeoutError(f"the early core (pid {self.pid}) still runs")
            else:
                time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 9)  # SIGKILL (POSIX's kill -9); signal imports enum
            except ProcessLookupError:
                pass


class Early:
    """The core started on the recorded manifest: its program, the manifest as run.py would
    write it (without `hold`), its scratch directory (inside the output directory, where the
    core's spill files and a data file of its own go), the time it was given, and the
    process."""

    def __init__(self, program: str, manifest: str, scratch: str, now: int,
                 process: Process) -> None:
        self.program, self.manifest, self.scratch, self.now = program, manifest, scratch, now
        self.process = process

    @property
    def data_file(self) -> str:
        return _data_file(self.scratch)

    def adopt(self, program: str, manifest: str) -> Process | None:
        """The process, told to go on, where PROGRAM and MANIFEST are its own; else None
        (the caller stops it)."""
        if program != self.program or manifest != self.manifest:
            return None
        try:  # past the pipe's buffer, which holds nothing yet: none left in it to flush
            os.write(self.process.stdin.fileno(), b"go\n")
        except BrokenPipeError:
            pass  # it ended before it held (it declined a zone, or failed): its output says
        return self.process

    def written(self, kind: str) -> tuple[str, str] | None:
        """Of its manifest's `state` or `image` lines: the file the core writes under a
        temporary name, and the one whose place that takes once the build is done (the
        earlier one's); None where the manifest names none."""
        lines = self.manifest.split("\n")
        at = lines.index(kind) if kind in lines else len(lines)
        return (lines[at + 1], lines[at + 2]) if at + 2 < len(lines) else None

    def remove_scratch(self) -> None:
        _remove(self.scratch)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.process.stdin.close()  # nothing buffered: `go` went past the buffer
        self.process.stderr.close()


def _data_file(scratch: str) -> str:
    """Where the early core writes the data when the driver answers `alone` (main.c's OUT)."""
    return os.path.join(scratch, "zonedata.bin")


_pending: Early | None = None
# This command's build, as its line gives it: (its arguments with OUT in the output
# directory's place, the working directory, SOURCE_DATE_EPOCH as set, the output directory
# as build() names it).
_command: tuple[list[str], str, str, str] | None = None


def _recorded(path: str) -> tuple[list[str], str, str, str, str] | None:
    """NEXT_FILE's (arguments, working directory, SOURCE_DATE_EPOCH, program, manifest), or
    None."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeError):
        return None
    lines = text.split("\n")
    try:
        count = int(lines[3])
    except (IndexError, ValueError):
        return None
    if lines[0] != MAGIC or count < 0 or len(lines) < 6 + count:
        return None
    return (lines[4:4 + count], lines[1], lines[2], lines[4 + count],
            "\n".join(lines[5 + count:]))


def start(output: str | os.PathLike[str], args: list[str]) -> None:
    """For `zonebake build ARGS` into OUTPUT: where OUTPUT's last build was made by the same
    command line (but for the output directory), in the same directory and with the same
    SOURCE_DATE_EPOCH, its core's program begins on the manifest it recorded. A clock moved
    by ZONEBAKE_CLOCK_FILE (clock.py) is not read here: then the driver starts the core."""
    global _pending, _command
    cwd, out = os.getcwd(), os.fspath(output)
    outdirlock.hold(out)  # before anything is begun there; else build() takes it
    _command = (_keyed(args, out), cwd, os.environ.get(EPOCH, ""), out)
    recorded = _recorded(os.path.join(out, NEXT_FILE))
    if recorded is None or os.environ.get("ZONEBAKE_CLOCK_FILE"):
        return
    *made_by, program, template = recorded
    if made_by != list(_command[:3]) or not _runnable(program, template):
        return
    scratch = os.path.join(os.path.abspath(out), f".zonebake-early-{os.getpid()}")
    try:
        os.mkdir(scratch, 0o700)
    except OSError:
        return
    now = int(time.time())
    manifest = template.replace(OUT, out).replace(SCRATCH, scratch).replace(NOW, str(now))
    held = manifest.removesuffix("end\n") + "hold\nend\n"
    path = os.path.join(scratch, "manifest")
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(held)
        process = Process(program, [path, _data_file(scratch)])
    except OSError:
        _remove(scratch)
        return
    _pending = Early(program, manifest, scratch, now, process)


def pending() -> Early | None:
    """The early core, where one was begun and nothing took it yet."""
    return _pending


def take() -> Early | None:
    """The early core, for the driver's first run of the core (run.bake), once."""
    global _pending
    early, _pending = _pending, None
    return early


def stop_early() -> None:
    """Before the command exits: an early core the driver did not take (it failed first)."""
    early = take()
    if early is not None:
        early.stop()
        early.remove_scratch()


def _remove(scratch: str) -> None:
    """SCRATCH and what is in it: the manifest and the core's files, no folder. Not by
    shutil.rmtree, at the end of a rebuild without the driver: shutil took 6 ms to import."""
    try:
        with os.scandir(scratch) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    raise IsADirectoryError(entry.path)
                os.unlink(entry.path)
        os.rmdir(scratch)
    except OSError:  # gone already, or not as the core leaves it
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)


def remember(outdir: os.PathLike[str], program: os.PathLike[str],
             manifest: str | None) -> None:
    """After a build into OUTDIR by this command (start): the manifest the next one gives
    the core's PROGRAM, with SCRATCH and NOW in it (run.next_manifest); None: none (the
    next build's manifest depends on more than its command line)."""
    if _command is None or os.path.abspath(_command[3]) != os.path.abspath(outdir):
        return
    args, cwd, epoch, out = _command
    path = os.path.join(out, NEXT_FILE)
    if manifest is None or any("\n" in text for text in (*args, cwd, epoch, str(program))):
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    # The lines naming a file in the output directory (its state and image) name it from
    # OUT, as the command line does.
    prefix = out + os.sep
    manifest = "\n".join(OUT + line[len(out):] if line.startswith(prefix) else line
                         for line in manifest.split("\n"))
    text = "\n".join([MAGIC, cwd, epoch, str(len(args)), *args, str(program), manifest])
    from ..toolchain import replacing  # the build's, loaded by now: not at the start
    replacing.put_text(path, text)
