"""User-space instructions per query of zonebake's UDP path, counted by callgrind (repeatable,
unlike wall time): one worker under valgrind, collecting only inside zb_udp_drain (the batch
loop: recvmmsg, the request handler, sendmmsg; the kernel is not counted), while loadgen sends
COUNT queries of one kind in batches of 32. Prints instructions per query for each kind."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

KINDS = {  # the lines of the query file that make each kind (see gen.py)
    "hit": lambda name, qtype: name.lower().startswith("host") and qtype in ("A", "AAAA"),
    "nodata": lambda name, qtype: qtype == "TXT",
    "nxdomain": lambda name, qtype: name.lower().startswith("nx"),
    "referral": lambda name, qtype: name.lower().startswith("www.cust"),
}


def instructions(server: Path, loadgen: Path, queries: list[str], count: int,
                 workdir: Path, function: str = "zb_udp_drain", edns: int = 0,
                 server_args: tuple[str, ...] = (), prepare=None) -> float:
    """`edns`: loadgen's --edns (1: an OPT record, 2: with DO set). `prepare(port)`, once the
    server serves, returns more loadgen options (a cookie it gave out)."""
    qfile = workdir / "queries"
    qfile.write_text("\n".join(queries[:count]) + "\n")
    out = workdir / "callgrind.out"
    port = 25353
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
         f"--toggle-collect={function}", str(server), "--threads", "1", "--batch", "32",
         "--listen", f"127.0.0.1:{port}", *(["--allow-root"] if os.geteuid() == 0 else []),
         *server_args],
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while "serving" not in (process.stderr.readline() or "") and time.monotonic() < deadline:
            pass
        extra = prepare(port) if prepare else []
        result = subprocess.run([str(loadgen), "127.0.0.1", str(port), str(qfile), "--count",
                                 str(count), "--window", "32", "--batch", "32", "--sockets",
                                 "1", "--cpu", "-1", "--edns", str(edns), *extra],
                                capture_output=True, text=True, check=True)
        answered = int(re.search(r"answered=(\d+)", result.stdout).group(1))
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
    totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    return int(totals.group(1)) / answered


def inclusive(out: Path, function: str) -> int:
    """Instructions counted in `function` and what it calls, from callgrind's last output."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                          capture_output=True, text=True, check=True).stdout
    match = re.search(rf"^\s*([\d,]+) .*:{re.escape(function)} ", text, re.M)
    return int(match.group(1).replace(",", "")) if match else 0


def straight_line(binary: Path, symbol: str) -> int:
    """The instructions of a function without a branch: executed once each per call, so their
    number is what a call costs. valgrind cannot run some instructions (the SHA extensions),
    and this counts what it cannot."""
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(binary)],
                          capture_output=True, text=True, check=True).stdout
    body = re.search(rf"^[0-9a-f]+ <{re.escape(symbol)}>:\n(.*?)\n\n", text, re.M | re.S)
    if not body:
        raise SystemExit(f"{binary}: no function {symbol}")
    lines = [line for line in body.group(1).splitlines() if "\t" in line]
    if any(re.search(r"\tj[a-z]+ ", line) for line in lines):
        raise SystemExit(f"{binary}: {symbol} branches; its length is not its cost")
    return len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("server", type=Path)
    parser.add_argument("loadgen", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("--count", type=int, default=3200)
    args = parser.parse_args()
    lines = args.queries.read_text().split("\n")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, matches in KINDS.items():
            chosen = [line for line in lines if line and matches(*line.split())]
            per_query = instructions(args.server, args.loadgen, chosen, args.count, Path(tmp))
            print(f"{kind:10} {per_query:8.0f} instructions/query")


if __name__ == "__main__":
    main()
