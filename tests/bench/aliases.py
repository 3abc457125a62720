"""Instructions per query of an alias's answer beside its target's own, counted by callgrind
(callgrind.py): the responder composes an alias's answer from the CNAME it stores and its
target's answer (compiler/core/semantics/aliases.c), where the target's records used to be
stored again behind every alias. The zone is make bench's (gen.py) with a www alias to every
4th host; unsigned, then signed with NSEC3 by dnssec-signzone (signzone.py) and asked with
DO set. Needs valgrind, and bind9-utils for the signed zone.

    .venv/bin/python tests/bench/aliases.py WORKDIR
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

import callgrind  # noqa: E402
import gen  # noqa: E402
import signzone  # noqa: E402

HOSTS = 95_000  # gen.py's hosts at 100,000 names
EVERY = 4
COUNT = 3200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workdir", type=Path)
    args = parser.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    zone, queries = work / "aliases.zone", work / "bench.queries"
    gen.generate(zone, queries, names=100_000)
    with zone.open("a") as f:
        f.writelines(f"www{i} CNAME host{i}\n" for i in range(0, HOSTS, EVERY))
    rng = random.Random(7)
    picked = [EVERY * rng.randrange(HOSTS // EVERY) for _ in range(COUNT)]
    kinds = {"alias": [f"www{i}.{gen.ORIGIN} A" for i in picked],
             "its target": [f"host{i}.{gen.ORIGIN} A" for i in picked]}
    loadgen = work / "loadgen"
    subprocess.run(["cc", "-O2", "-o", str(loadgen), str(Path(__file__).parent / "loadgen.c")],
                   check=True)
    signed = signzone.sign(zone, gen.ORIGIN, work / "signed", kinds=("nsec3",))
    for label, source, edns in (("unsigned", zone, 0), ("NSEC3, DO set", signed["nsec3"], 2)):
        out = work / label.split(",")[0]
        subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "--zone",
                        f"{gen.ORIGIN}={source}", "-o", str(out)], check=True)
        counts = {kind: callgrind.instructions(out / "zonebake-server", loadgen, lines, COUNT,
                                               work, edns=edns)
                  for kind, lines in kinds.items()}
        print(f"{label:14} " + "  ".join(f"{kind} {n:4.0f}" for kind, n in counts.items()) +
              " instructions/query", flush=True)


if __name__ == "__main__":
    main()
