"""Progress and stage timings for builds long enough to wonder about.

Each stage of the pipeline runs inside `Progress.stage`; loops over many items go through
`Progress.each`, which says on stderr how far the stage is (count, total, rate) every few
seconds, once the build has run for a few seconds: small builds stay silent. A stage that goes
over its items in several steps (the tree, the perfect hash, the layout) gives each step a
unit of its own, and the count starts again. At the end, `summary` gives every stage's time
and the compiler's peak memory. `-q` silences all of it.
"""

from __future__ import annotations

import resource
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, TextIO, TypeVar

T = TypeVar("T")
# How a stage goes over its items: each(items, total, unit) yields them. Progress.each counts
# them; `uncounted`, the stages' default, costs nothing per item.
Each = Callable[[Iterable[T], int, str], Iterable[T]]
QUIET_FOR = 5.0  # seconds of build before anything is said
EVERY = 5.0  # seconds between progress lines of a stage
LOOK_EVERY = 1024  # items counted between looks at the clock


@dataclass
class StageTime:
    name: str
    seconds: float
    count: int | None  # items handled, for stages that loop over them (in the last step)
    unit: str = ""
    details: list[StageTime] = field(default_factory=list)  # its own steps (the native baker's)

    def __str__(self) -> str:
        steps = ", ".join(f"{d.name} {d.seconds:.1f} s" for d in self.details)
        return f"{self.name} {self.seconds:.1f} s" + (f" ({steps})" if steps else "")


@dataclass
class Progress:
    out: TextIO | None = field(default_factory=lambda: sys.stderr)  # None: quiet
    clock: Callable[[], float] = time.monotonic
    stages: list[StageTime] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.started = self.clock()
        self._next_line = self.started + QUIET_FOR
        self._current: StageTime | None = None

    @contextmanager
    def stage(self, name: str, unit: str = "") -> Iterator[None]:
        self._counting_since = begun = self.clock()
        self._current = StageTime(name, 0.0, None, unit)
        try:
            yield
        finally:
            self._current.seconds = self.clock() - begun
            self.stages.append(self._current)
            self._current = None

    def each(self, items: Iterable[T], total: int | None = None,
             unit: str | None = None) -> Iterator[T]:
        """Yield the items, counting them for the current stage; with a unit, they are a step
        of the stage, counted from zero in that unit (from the first item asked for)."""
        if unit is not None:
            self.step(unit)
        for item in items:
            yield item
            self.tick(total)

    def step(self, unit: str) -> None:
        """A new step of the current stage: counted from zero, in its own unit."""
        current = self._current
        assert current is not None, "items are counted inside a stage"
        current.count, current.unit = 0, unit
        self._counting_since = self.clock()

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

    def detail(self, name: str, seconds: float, count: int, unit: str) -> None:
        """A step of the current stage has ended (the native baker reports its own): noted
        for the summary, and said as it happens once the build has run a few seconds."""
        current = self._current
        assert current is not None, "steps are inside a stage"
        current.details.append(StageTime(name, seconds, count, unit))
        if self.out is not None and self.clock() - self.started >= QUIET_FOR:
            rate = f", {count / seconds:.0f}/s" if seconds > 0 else ""
            self._say(f"{current.name}: {name}: {count} {unit} in {seconds:.1f} s{rate}")

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


def uncounted(items: Iterable[T], total: int | None = None,
              unit: str | None = None) -> Iterable[T]:
    """The items as they are: how the stages go over them when nobody counts."""
    return items


def peak_memory_mib() -> int:
    """The peak resident set so far of this process or of any it ran and waited for (the
    native baker, the C compiler); Linux reports kilobytes."""
    return max(resource.getrusage(who).ru_maxrss
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) // 1024
