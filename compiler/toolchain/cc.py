"""Stage 9: compile the responder's C sources with the generated zonedata.c into one static
executable, written atomically: the old binary stays in place until the new one is complete.

The runtime's C files (main.c, and those in its folders: transport/, query/, server/, ops/)
compile to objects kept in a cache (objcache.py), so a build compiles only zonedata.c and
links; on a miss they compile in parallel with it. Each file compiles in its own directory
under its bare name, with the runtime's root on the include path as a relative path (-I..),
so no object (and no binary) depends on where the checkout, the output directory or the
cache is.

The data, hundreds of MiB for a large zone set, is not assembled and linked: the link has a
one-byte placeholder, and the core writes the data straight into the server's file, between
the linked file's head and tail as elfsplice.py lays them out: the same bytes as the
assembler and the linker would write, with the data written once and never copied. Where
elfsplice refuses the linked file, the core writes zonedata.bin, and the assembler and the
linker do it all. zonedata.c holds the set's
configuration alone (the layout's numbers are in the data's head): the compile and the link
run while the core runs (EarlyServer), and their result is cached, so that a rebuild of the
set compiles and links nothing."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, ContextManager

from . import elfsplice, objcache, prefill, replacing, scratch
from ..errors import UsageError

CFLAGS = ["-std=gnu11", "-O2", "-pthread", "-fno-strict-aliasing", "-Wall", "-Wextra", "-static"]
# ZONEBAKE_SANITIZE=1 builds the server with AddressSanitizer and UndefinedBehaviorSanitizer,
# for the tests: any finding aborts it. Their runtimes cannot link statically.
SANITIZE_CFLAGS = ["-std=gnu11", "-O1", "-g", "-pthread", "-fno-strict-aliasing",
                   "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                   "-fno-sanitize-recover=all"]
# No build ID: the linker's SHA-1 of the whole output took 1.5 s of a 2 s link for a 479 MiB
# zone set, and nothing reads it (the binary is reproducible; its bytes identify it). With one,
# the data spliced in after the link (elfsplice.py) would sit under the placeholder's hash.
# zb_data's section at 1 GiB, far above the rest of the program: ld then gives it a PT_LOAD
# segment of its own, the last in memory and in the file, which elfsplice needs. A static
# binary starts at 4 MiB on x86_64 and aarch64 alike (ld's default text segment), so the rest
# never reaches it, and 1 GiB is a multiple of any page size ld aligns segments to (4 KiB on
# x86_64, 64 KiB on aarch64, which is untested). A PIE (the sanitizer builds) moves as a whole.
DATA_ADDRESS = 0x40000000
LDFLAGS = ["-Wl,--build-id=none", f"-Wl,--section-start={elfsplice.SECTION}={DATA_ADDRESS:#x}"]
# Environment variables that change what the compiler reads, beside its command line.
COMPILER_ENV = ["CPATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH"]


def runtime_dir() -> Path:
    """runtime/ beside compiler/ in a checkout; zonebake/runtime/ in an installed package."""
    package = Path(__file__).resolve().parent.parent  # zonebake itself
    for candidate in (package / "runtime", package.parent / "runtime"):
        if (candidate / "zonedata.h").is_file():
            return candidate
    raise UsageError(f"the responder's C sources are missing (looked beside {package})")


Setting = tuple[list[str], Path, list[Path], list[str], str]
# A Setting and the cache's entry of its objects (None: not in the cache), from prepare_runtime.
Prepared = tuple[Setting, Path | None]


def _setting() -> Setting:
    """The compiler, runtime/, the runtime's C files, the flags, and the cache key."""
    cc = shlex.split(os.environ.get("CC", "cc"))
    runtime = runtime_dir()
    sources = runtime_sources(runtime)
    flags = SANITIZE_CFLAGS if os.environ.get("ZONEBAKE_SANITIZE") else CFLAGS
    return cc, runtime, sources, flags, runtime_key(cc, flags, runtime)


def runtime_sources(runtime: Path) -> list[Path]:
    """The runtime's C files, relative to runtime/, in the order their objects link: by name,
    whatever their folder. The objects, named after them, share one directory: no two may
    have one name."""
    sources = sorted((p.relative_to(runtime) for p in runtime.rglob("*.c")),
                     key=lambda p: p.name)
    names = [p.name for p in sources]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise UsageError(f"two of the responder's C files are named {', '.join(twice)}")
    return sources


def _runtime_jobs(cc: list[str], runtime: Path, sources: list[Path], flags: list[str],
                  into: Path) -> list[tuple[list[str], Path]]:
    """Each source compiled in its own directory under its bare name, with runtime/ on the
    include path as "." or "..", for the includes name headers from there ("query/wire.h")."""
    jobs = []
    for source in sources:
        root = "/".join([".."] * len(source.parent.parts)) or "."
        jobs.append(([*cc, *flags, f"-I{root}", "-MD", "-MF", str(into / f"{source.stem}.d"),
                      "-c", source.name, "-o", str(into / f"{source.stem}.o")],
                     runtime / source.parent))
    return jobs


def prepare_runtime() -> Prepared:
    """Put the runtime's objects in the cache if they are not there: `build` runs this while
    the zones are being compiled, which leaves a core idle most of the time. Without a cache
    to write to it does nothing, and compile_server compiles them. What it found, for
    compile_server: asking the compiler who it is and checking the cache's entry take a
    rebuild's CPU from its core (25 ms of 0.3 s, at 200,000 names)."""
    setting = _setting()
    cc, runtime, sources, flags, key = setting
    if objcache.cache_dir() is None:
        return setting, None
    entry = objcache.lookup(key)
    if entry is None:
        with objcache.workspace() as fresh:
            run_all(_runtime_jobs(cc, runtime, sources, flags, fresh))
            entry = objcache.store(key, fresh, headers_read(fresh))
    return setting, entry


LINKED = "zonebake-server"  # a linked entry's file (objcache.py): the server less its data


def compile_server(zonedata_c: Path, output: Path, splice: bool = True,
                   data_ready: Callable[[], None] = lambda: None,
                   compiled_as: Path | None = None, prepared: Prepared | None = None,
                   offer: Callable[[Path, Path], bool] | None = None) -> None:
    """Link the responder with a one-byte placeholder for zonedata.bin and splice the data in
    (elfsplice.py). Where the linked file is not what elfsplice knows, or `splice` is False,
    the assembler and the linker copy the data in, as a manual build does: the same binary.
    `data_ready` returns once zonedata.bin is there, beside zonedata.c: the compile and the
    link before it need only zonedata.c. `compiled_as`: the directory a sanitizer build's
    debug information names for zonedata.c, when it is compiled elsewhere. `prepared`: what
    prepare_runtime found, if it ran. `offer` is handed the linked file and the server's
    temporary file, and returns True once the data is written into the latter (EarlyServer);
    False: the data is zonedata.bin, once `data_ready` returns.

    zonedata.c holds the configuration alone, so the placeholder's link is cached too (next
    to the runtime's objects, with the system files it read): a rebuild of the same set
    compiles and links nothing."""
    zonedata_c, output = zonedata_c.absolute(), output.absolute()  # the compiles change directory
    if prepared is None:
        setting = _setting()
        prepared = setting, objcache.lookup(setting[-1])
    (cc, runtime, sources, flags, key), cached = prepared
    data = zonedata_c.with_name("zonedata.bin")
    temporary = Path(prefill.temporary_for(output))
    try:
        with objcache.workspace() as fresh:
            objects = cached or fresh

            def compile_and_link(data_object: Path, binary: Path, placeholder: bool,
                                 jobs: list[tuple[list[str], Path]]) -> str:
                """The link's trace (ld -t: the files it read) with the placeholder."""
                # -Wa,-I.: the assembler finds zonedata.bin beside zonedata.c (.incbin).
                define = ["-DZB_DATA_PLACEHOLDER", "-MD", "-MF",
                          str(data_object.with_suffix(".d"))] if placeholder else []
                if compiled_as is not None and "-g" in flags:
                    define.append(f"-ffile-prefix-map={zonedata_c.parent.resolve()}="
                                  f"{compiled_as.resolve()}")  # as getcwd() gives them
                run_all([([*cc, *flags, f"-I{runtime}", "-Wa,-I.", *define, "-c",
                           zonedata_c.name, "-o", str(data_object)], zonedata_c.parent), *jobs])
                # The order of the objects is the order of the binary's contents.
                return run([*cc, *flags, *LDFLAGS, *(["-Wl,-t"] if placeholder else []),
                            *(str(objects / f"{p.stem}.o") for p in sources),
                            str(data_object), "-o", str(binary)], None)

            # The runtime's objects compile alongside the first compile of zonedata.c.
            jobs = [] if cached else _runtime_jobs(cc, runtime, sources, flags, fresh)
            spliced = False
            if splice:
                link_key = _link_key(key, zonedata_c, flags, compiled_as)
                entry = objcache.lookup(link_key) if cached is not None else None
                with objcache.workspace() as linking:
                    if entry is None:
                        trace = compile_and_link(linking / "zonedata.o", linking / LINKED,
                                                 True, jobs)
                        jobs = []  # compiled by now
                        if cached is not None:
                            entry = _store_linked(link_key, linking, trace, objects)
                    linked = entry / LINKED if entry is not None else linking / LINKED
                    spliced = offer is not None and offer(linked, temporary)
                    if not spliced:
                        data_ready()
                        spliced = _splice(linked, data, temporary)
            else:
                data_ready()
            if not spliced:
                with _scratch_for(data, output) as scratch_dir:
                    data_object = scratch_dir / f".zonedata.{os.getpid()}.o.tmp"
                    try:
                        compile_and_link(data_object, temporary, False, jobs)
                    finally:
                        data_object.unlink(missing_ok=True)
            if cached is None:
                objcache.store(key, fresh, headers_read(fresh))
        replacing.put_releasing(temporary, output)  # the last build's, freed meanwhile
    finally:
        temporary.unlink(missing_ok=True)


def _link_key(key: str, zonedata_c: Path, flags: list[str], compiled_as: Path | None) -> str:
    """A placeholder link's cache key: the runtime objects' (compiler, flags, sources), the
    link's own flags, zonedata.c, and where debug information says it was compiled, if it
    says."""
    where = str(compiled_as or zonedata_c.parent) if "-g" in flags else ""
    return objcache.LINKED_PREFIX + objcache.key([
        key.encode(), *(flag.encode() for flag in LDFLAGS), zonedata_c.read_bytes(),
        where.encode()])


def _store_linked(link_key: str, linking: Path, trace: str, objects: Path) -> Path | None:
    """The placeholder's link (in LINKING, a workspace) as a cache entry, checked by the
    headers zonedata.c read and the system's files the link read (crt*.o, libc.a...): an
    upgraded libc costs a link, never a binary other than a cold build's. The entry, or None
    where it could not be stored."""
    ours = (f"{objects}{os.sep}", f"{linking}{os.sep}")  # checked by the key, or not kept
    inputs = sorted({line.strip() for line in trace.splitlines()
                     if os.path.isabs(line.strip()) and not line.strip().startswith(ours)})
    headers = headers_read(linking)
    (linking / "zonedata.o").unlink(missing_ok=True)
    return objcache.store(link_key, linking, headers + inputs, files=[LINKED])


class Abandoned(Exception):
    """The data an early compile waited for will not come."""


class EarlyServer:
    """The server compiled and linked while the core reads, checks and lays out the zones:
    zonedata.c holds the configuration alone (the layout's numbers are in the data's head),
    so it is known before the core runs. The compile runs in a directory of its own inside
    OUTDIR, so that OUTDIR's files change only once the server is complete.

    The data is written once: once its size is known, the core asks where it goes (`place`),
    and is given the server's temporary file, the linked placeholder's head and tail already
    around a hole for it (elfsplice.prepare): it waits for the link if it has to (on a first
    build, while the runtime compiles). Where the link failed or is not one elfsplice knows,
    the core writes `data_file`, beside zonedata.c, which the assembler then links in."""

    def __init__(self, outdir: Path, pool: Executor, runtime: Future,
                 earlier: tuple[Path, tuple[int, int]] | None = None) -> None:
        self.outdir, self.pool, self.runtime = outdir, pool, runtime
        self.future: Future | None = None
        self._prefill: prefill.Prefill | None = None
        self._prefilled: tuple[int, int] | None = None  # the earlier data's span, once copied
        self.zonedata_text: str | None = None  # once rendered
        self._linked: tuple[Path, Path] | None = None  # the placeholder's link, the server's
        self.linked_entry: Path | None = None  # that link, where it is the cache's (objcache)
        self._offered = threading.Event()  # _linked is set, or will never be
        self._data = threading.Event()
        self._into = False  # the core was given the server's file
        self._abandoned = False
        self.scratch = Path(tempfile.mkdtemp(prefix=".zonebake-cc-", dir=self.outdir))
        self.data_file = self.scratch / "zonedata.bin"
        if earlier is not None:  # its data copied into the server's file (prefill.py)
            server, span = earlier
            temporary = prefill.temporary_for(outdir / prefill.SERVER_FILE)
            self._prefill = prefill.take(outdir, server, span) or \
                prefill.start(server, span, temporary)

    def _prefill_done(self) -> None:
        """Before anything else writes the server's temporary file."""
        if self._prefill is not None:
            self._prefilled = self._prefill.done()

    def start(self, render: Callable[[], str]) -> None:
        """Render zonedata.c (`render`) and compile the server, on the pool."""
        self.future = self.pool.submit(self._compile, render)

    def _compile(self, render: Callable[[], str]) -> None:
        try:
            if self._abandoned:  # before it began: a build that failed early waits for nothing
                raise Abandoned
            zonedata_c = self.scratch / "zonedata.c"
            text = render()
            zonedata_c.write_text(text, encoding="ascii")
            self.zonedata_text = text
            compile_server(zonedata_c, self.outdir / prefill.SERVER_FILE,
                           data_ready=self._wait_for_data, compiled_as=self.outdir.absolute(),
                           prepared=self.runtime.result(), offer=self._offer)
        finally:
            self._offered.set()

    def _offer(self, linked: Path, temporary: Path) -> bool:
        """The link is done: `place` may hand the core TEMPORARY. True once the core has
        written the data there."""
        self._prefill_done()
        self._linked = linked, temporary
        cache = objcache.cache_dir()
        if cache is not None and linked.parent.parent == cache:
            self.linked_entry = linked
        self._offered.set()
        self._wait_for_data()
        return self._into

    def place(self, size: int) -> tuple[Path, int, int] | None:
        """Where the core writes SIZE octets of data (run.Where): the server's temporary
        file, made ready, the offset, and how many octets there hold the earlier build's
        data already (elfsplice.prepare); None: data_file. Waits for the link."""
        self._offered.wait()
        if self._linked is None or self._abandoned:
            return None
        linked, temporary = self._linked
        placed = elfsplice.prepare_for_core(linked, temporary, size, self._prefilled)
        if placed is None:
            return None
        self._into = True
        return temporary, *placed

    def _wait_for_data(self) -> None:
        self._prefill_done()
        self._data.wait()
        if self._abandoned:
            raise Abandoned

    def data_written(self) -> None:
        """The core is done: the data is in the server's file, or in data_file."""
        self._data.set()

    def finish(self) -> None:
        """Wait for the server; raises what the compile raised."""
        try:
            assert self.future is not None
            self.future.result()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def abandon(self) -> None:
        """No data is coming (the core failed, or the zones have errors): stop, and leave
        nothing."""
        self._abandoned = True
        self._data.set()
        self._prefill_done()
        if self.future is not None:
            try:
                self.finish()
            except Exception:  # whatever it was, the build that follows compiles it again
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self._prefill is not None:  # not taken over by a compile that began
            self._prefill.stop()


def _splice(linked: Path, data: Path, binary: Path) -> bool:
    """elfsplice.splice; False where it refuses the linked file or cannot write BINARY (then
    the full link does, or says why not)."""
    try:
        elfsplice.splice(linked, data, binary)
    except (elfsplice.Refused, OSError):
        return False
    return True


def _scratch_for(data: Path, output: Path) -> ContextManager[Path]:
    """Where to put the temporary data object, as big as the data: in memory if there is
    room for it twice over, else beside the output."""
    try:
        size = data.stat().st_size
    except OSError:
        size = 0
    return scratch.directory_for(2 * size, output.parent)


def compilers_run() -> list[str]:
    """The commands PATH finds that a build runs (compiler_identity names them): the C
    compiler and the assembler."""
    return [shlex.split(os.environ.get("CC", "cc"))[0], "as"]


def runtime_key(cc: list[str], flags: list[str], runtime: Path) -> str:
    """The cache key of the runtime's objects: the compiler, its command line and environment,
    and every source and header of runtime/, by its path there. The headers outside it are
    checked by the cache's manifest instead: which ones a compile reads is known only after
    it."""
    sources = sorted(runtime.rglob("*.[ch]"))
    return objcache.key([
        compiler_identity(cc, runtime), *(arg.encode() for arg in cc + flags),
        str(runtime).encode(),  # sanitizer builds (-g) record the directory they compiled in
        *(os.environ.get(name, "").encode() for name in COMPILER_ENV),
        *(part for path in sources
          for part in (path.relative_to(runtime).as_posix().encode(), path.read_bytes())),
    ])


def compiler_identity(cc: list[str], cwd: Path, cache: bool = True) -> bytes:
    """What names the compiler and assembler: the path cc resolves to, and `-v` with the
    assembler's --version, which give both versions and gcc's configuration in one run (cwd
    fixed: clang prints it). Kept in the cache until the compiler's or the assembler's
    executable changes (objcache.remembered; with `cache` false, not written there): running
    them took 20 ms of every build."""
    path = os.path.realpath(shutil.which(cc[0]) or cc[0])
    command = [*cc, "-v", "-c", "-x", "assembler", os.devnull, "-o", os.devnull,
               "-Wa,--version"]

    def ask() -> bytes:
        try:
            result = subprocess.run(command, capture_output=True, cwd=cwd)
        except OSError as exc:
            raise UsageError(f"cannot run the C compiler {cc[0]!r}: {exc.strerror}") from None
        return b"\0".join([path.encode(), str(result.returncode).encode(), result.stdout,
                           result.stderr])
    assembler = os.path.realpath(shutil.which("as") or "as")
    return objcache.remembered(
        [*(arg.encode() for arg in command), str(cwd).encode(),
         *(os.environ.get(name, "").encode() for name in ("PATH", *COMPILER_ENV))],
        [Path(path), Path(assembler)], ask, write=cache)


def run_all(jobs: list[tuple[list[str], Path]]) -> None:
    """Run the compiles on every core; report the first failure in the order given."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for future in [pool.submit(run, command, cwd) for command, cwd in jobs]:
            future.result()


def run(command: list[str], cwd: Path | None) -> str:
    """The command's output; UsageError with its errors when it fails."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    except OSError as exc:
        raise UsageError(f"cannot run the C compiler {command[0]!r}: {exc.strerror}") from None
    if result.returncode != 0:
        where = f"cd {shlex.quote(str(cwd))} && " if cwd is not None else ""
        raise UsageError(f"the C compiler failed ({where}{shlex.join(command)}):\n"
                         f"{result.stderr}")
    return result.stdout


def headers_read(objects: Path) -> list[str]:
    """The headers outside runtime/ that the compiles read, from their -MD dependency lists
    (make syntax: 'x.o: x.c a.h \\' and continuation lines); the lists are then removed. A path
    with a space in it would come out in pieces that cannot be read: then nothing is cached."""
    headers = set()
    for depfile in objects.glob("*.d"):
        text = depfile.read_text().replace("\\\n", " ")
        headers.update(word for word in text.partition(":")[2].split() if os.path.isabs(word))
        depfile.unlink()
    return sorted(headers)
