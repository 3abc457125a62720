"""Progress and stage timings for builds long enough to wonder about.

Each stage of a build runs inside `Progress.stage`. The core reports each of its phases as it
ends (`detail`); a stage that goes over many items itself (dnspython reading a zone file)
counts them (`tick`), and says on stderr how far it is (count, rate) every few seconds, as
the driver says of the signatures it makes and verifies for the core (`along`). All of
it only once the build has run a few seconds: small builds stay silent. At the end, `summary`
gives every stage's time and the compiler's peak memory. `-q` silences all of it.
"""

from __future__ import annotations

import resource
import sys
import time

QUIET_FOR = 5.0  # seconds of build before anything is said
EVERY = 5.0  # seconds between progress lines of a stage
LOOK_EVERY = 1024  # items counted between looks at the clock
# Units of the core's reports that count something rather than time a step: the regions a
# build over an earlier build copied from it (compiler/core/layout/reuse.c) and those of them
# it found in place in the server's file (layout.c), the signatures
# a rebuild took from the signing cache by its trail (compiler/core/dnssec/signer.c), the
# zones whose chain it did not check again (compiler/core/dnssec/chaincheck.c), the lines of
# a zone file read again over the earlier build's image of it (compiler/core/read/image.c).
COUNTED = {"regions", "taken", "kept", "lines"}


def core_phase(line: str) -> tuple[str, float, int, str]:
    """A core's `phase SECONDS COUNT UNIT NAME` line (base/util.c's phase_took): the name,
    seconds, count and unit, as `detail` takes them."""
    seconds, count, unit, name = line[6:].rstrip("\n").split(" ", 3)
    return name, float(seconds), int(count), unit


class StageTime:
    # Plain classes, not dataclasses, and no contextlib: a rebuild without the driver
    # (core/driverless.py) imports this module while its core works, and those imports took
    # 6 and 2 ms of the processors.
    def __init__(self, name: str, seconds: float, count: int | None, unit: str = "",
                 details: list[StageTime] | None = None) -> None:
        self.name, self.seconds, self.unit = name, seconds, unit
        self.count = count  # items handled, for stages that loop over them (in the last step)
        self.details = details if details is not None else []  # its own steps (the core's)

    def __str__(self) -> str:
        steps = ", ".join(f"{d.name} {d.count:,}" if d.unit in COUNTED else
                          f"{d.name} {d.seconds:.1f} s" for d in self.details)
        return f"{self.name} {self.seconds:.1f} s" + (f" ({steps})" if steps else "")


class Progress:
    def __init__(self, out: TextIO | None,  # None: quiet
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.out, self.clock = out, clock
        self.stages: list[StageTime] = []
        self.started = self.clock()
        self._next_line = self.started + QUIET_FOR
        self._current: StageTime | None = None
        self._steps: dict[str, float] = {}  # when each step `along` tells of began

    def stage(self, name: str, unit: str = "") -> _Stage:
        """`with progress.stage(NAME):` times what it holds as the stage NAME."""
        return _Stage(self, name, unit)

    def tick(self, total: int | None = None) -> None:
        """One more item done in the current stage; every few seconds, say how far it is."""
        current = self._current
        assert current is not None, "items are counted inside a stage"
        current.count = (current.count or 0) + 1
        if current.count % LOOK_EVERY == 0 and self.out is not None:
            now = self.clock()
            if now >= self._next_line:
                self._next_line = now + EVERY
                of = f"/{total}" if total is not None else ""
                seconds = now - self._counting_since
                rate = f", {current.count / seconds:.0f}/s" if seconds > 0 else ""
                self._say(f"{current.name}: {current.count}{of} {current.unit}{rate}")

    def along(self, name: str, done: int, total: int, unit: str) -> None:
        """A step of the current stage that goes over `total` items outside the core (the
        signatures made or verified) has done `done`: every few seconds, say how far."""
        now = self.clock()
        began = self._steps.setdefault(name, now)  # along(name, 0, ...): the step begins
        if self.out is None or done == 0 or now < self._next_line:
            return
        self._next_line = now + EVERY
        rate = f", {done / (now - began):.0f}/s" if now > began else ""
        self._say(f"{self._current.name if self._current else name}: {name}: {done}/{total} "
                  f"{unit}{rate}")

    def detail(self, name: str, seconds: float, count: int, unit: str) -> None:
        """A step of the current stage has ended (the core reports its own): noted
        for the summary, and said as it happens once the build has run a few seconds."""
        current = self._current
        assert current is not None, "steps are inside a stage"
        current.details.append(StageTime(name, seconds, count, unit))
        if self.out is not None and self.clock() - self.started >= QUIET_FOR:
            rate = f", {count / seconds:.0f}/s" if seconds > 0 else ""
            took = "" if unit in COUNTED else f" in {seconds:.1f} s{rate}"
            self._say(f"{current.name}: {name}: {count} {unit}{took}")

    def summary(self) -> str:
        total = self.clock() - self.started
        stages = ", ".join(map(str, self.stages))
        return f"built in {total:.1f} s ({stages}); peak memory {peak_memory_mib()} MiB"

    def finish(self) -> None:
        """The summary, for builds that took long enough to have said anything."""
        if self.out is not None and self.clock() - self.started >= QUIET_FOR:
            self._say(self.summary())

    def _say(self, text: str) -> None:
        assert self.out is not None
        print(f"zonebake: {text}", file=self.out, flush=True)


class _Stage:
    def __init__(self, progress: Progress, name: str, unit: str) -> None:
        self.progress, self.name, self.unit = progress, name, unit

    def __enter__(self) -> None:
        progress = self.progress
        progress._counting_since = self.begun = progress.clock()
        progress._current = StageTime(self.name, 0.0, None, self.unit)

    def __exit__(self, *exception: object) -> None:
        progress = self.progress
        progress._current.seconds = progress.clock() - self.begun
        progress.stages.append(progress._current)
        progress._current = None


def peak_memory_mib() -> int:
    """The peak resident set so far of this process or of any it ran and waited for (the
    core, the C compiler), in MiB. This process's own is its VmHWM: getrusage's would count
    the memory of whatever ran before the exec that started it (Linux keeps the larger)."""
    own = None
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    own = int(line.split()[1])
    except OSError:
        pass
    if own is None:  # not Linux
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) // 1024
