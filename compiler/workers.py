"""Work spread over every processor: the signatures verified (signatures.py) and made
(signing.py), a chunk of a file to each process."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterable


def map_chunks(fn: Callable[..., list], chunks: Iterable[tuple], inline: bool,
               initializer: Callable[..., None] | None = None, initargs: tuple = (),
               done: Callable[[int], None] = lambda _: None) -> list:
    """fn(*chunk) for each chunk, the results in order, concatenated: in this process when
    `inline` (small jobs: starting processes costs more) or there is one processor, else on
    every processor. `done(k)` hears that the first k chunks are done."""
    chunks = list(chunks)
    parts: list[Any] = []
    if inline or (os.cpu_count() or 1) == 1 or len(chunks) < 2:
        if initializer is not None:
            initializer(*initargs)
        for chunk in chunks:
            parts.append(fn(*chunk))
            done(len(parts))
    else:
        # forkserver: the driver has threads, which fork must not copy.
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(os.cpu_count(), mp_context=context, initializer=initializer,
                                 initargs=initargs) as pool:
            for part in pool.map(fn, *zip(*chunks), chunksize=1):
                parts.append(part)
                done(len(parts))
    return [item for part in parts for item in part]
