"""Stage 9: compile the responder's C sources with the generated zonedata.c into one static
executable, written atomically: the old binary stays in place until the new one is complete."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from .errors import UsageError

CFLAGS = ["-std=gnu11", "-O2", "-pthread", "-fno-strict-aliasing", "-Wall", "-Wextra", "-static"]
# ZONEBAKE_SANITIZE=1 builds the server with AddressSanitizer and UndefinedBehaviorSanitizer,
# for the tests: any finding aborts it. Their runtimes cannot link statically.
SANITIZE_CFLAGS = ["-std=gnu11", "-O1", "-g", "-pthread", "-fno-strict-aliasing",
                   "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                   "-fno-sanitize-recover=all"]
# No build ID: the linker's SHA-1 of the whole output took 1.5 s of a 2 s link for a 479 MiB
# zone set, and nothing reads it (the binary is reproducible; its bytes identify it).
LDFLAGS = ["-Wl,--build-id=none"]


def runtime_dir() -> Path:
    """runtime/ beside compiler/ in a checkout; zonebake/runtime/ in an installed package."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "runtime", package.parent / "runtime"):
        if (candidate / "zonedata.h").is_file():
            return candidate
    raise UsageError(f"the responder's C sources are missing (looked beside {package})")


def compile_server(zonedata_c: Path, output: Path) -> None:
    cc = shlex.split(os.environ.get("CC", "cc"))
    runtime = runtime_dir()
    sources = sorted(str(p) for p in runtime.glob("*.c"))
    temporary = output.with_name(f".{output.name}.tmp")
    flags = SANITIZE_CFLAGS if os.environ.get("ZONEBAKE_SANITIZE") else CFLAGS
    # -Wa,-I: the assembler finds zonedata.bin beside zonedata.c (.incbin).
    command = [*cc, *flags, *LDFLAGS, f"-I{runtime}", f"-Wa,-I{zonedata_c.parent}", *sources,
               str(zonedata_c), "-o", str(temporary)]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as exc:
        raise UsageError(f"cannot run the C compiler {cc[0]!r}: {exc.strerror}") from None
    if result.returncode != 0:
        temporary.unlink(missing_ok=True)
        raise UsageError(f"the C compiler failed ({shlex.join(command)}):\n{result.stderr}")
    os.replace(temporary, output)
