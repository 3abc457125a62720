"""Write the seed corpora of the compiler core's fuzz targets from the test zones:
tests/fuzz/corpus/reader (zone files as they are) and tests/fuzz/corpus/core (zone sets in the
form core_harness.h reads: parents and children, every kind the differential tests serve,
zones pre-signed, and zones signed at build time with NSEC, NSEC3 and opt-out). Run it again
after changing the list; the files are named by content, so reruns are stable.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).parent
TESTS = HERE.parent
sys.path.insert(0, str(TESTS))
from buildsigned import dname_to_apex  # noqa: E402
ROOT = TESTS.parent
CORPUS = HERE / "corpus"
LARGEST = 16384  # run.sh's -max_len

DIFFERENTIAL = TESTS / "differential" / "zones"
SIGNED = TESTS / "zones" / "signed"

# (origin, file, how it is signed at build time: "", "nsec", "nsec3", "nsec3-opt-out")
SETS: list[list[tuple[str, Path, str]]] = [
    [("example.", DIFFERENTIAL / "features" / "example.zone", ""),
     ("example.net.", DIFFERENTIAL / "features" / "example.net.zone", "")],
    [("example.com.", DIFFERENTIAL / "parentchild" / "example.com.zone", ""),
     ("sub.example.com.", DIFFERENTIAL / "parentchild" / "sub.example.com.zone", "")],
    [("example.", DIFFERENTIAL / "rfc4592" / "example.zone", "")],
    [("example.", DIFFERENTIAL / "dnamechains" / "example.zone", "")],
    [("example.", DIFFERENTIAL / "svcb" / "example.zone", "")],
    [("example.", DIFFERENTIAL / "handkept" / "example.zone", "")],
    [(".", DIFFERENTIAL / "rfc1034" / "root.zone", ""),
     ("edu.", DIFFERENTIAL / "rfc1034" / "edu.zone", "")],
    *[[("example.", path, "")] for path in sorted(SIGNED.glob("example.*.zone"))],
    [("nsec.test.", HERE / "zones" / "nsec.test.zone", ""),
     ("nsec3.test.", HERE / "zones" / "nsec3.test.zone", "")],
    *[[("example.", SIGNED / "example.unsigned.zone", chain)]
      for chain in ("nsec", "nsec3", "nsec3-opt-out")],
]

# Every directive and an $INCLUDE of the harness's inc.zone, escapes and parentheses.
FORMS = """$ORIGIN example.
$TTL 1h
@ IN SOA ns1 hostmaster ( 1 ; serial
    2h 1h 2w 5m )
@ NS ns1
ns1 A 192.0.2.1
$INCLUDE inc.zone
$INCLUDE inc.zone sub
we\\.ird\\046 TXT "a \\"quoted\\" \\255 string" two
\\# 3 TYPE65280 \\# 3 010203
*.wild 300 IN TXT x
_sip._udp SRV 0 5 5060 ns1
svc HTTPS 1 . alpn=h2,h3 port=443 ipv4hint=192.0.2.1
"""


def zone_set_text(zones: list[tuple[str, str, str]], options: str = "") -> bytes:
    text = f"; set {options}\n" if options else ""
    for origin, zone, chain in zones:
        text += f"; zone {origin}{' ' + chain if chain else ''}\n{zone}"
        if not zone.endswith("\n"):
            text += "\n"
    return text.encode()


def core_seeds() -> list[bytes]:
    # RFC 1034's EDU zone lacks glue for a server of its own: refused unless lenient.
    out = [zone_set_text([(origin, path.read_text(), chain) for origin, path, chain in zones],
                         "lenient" if zones[0][0] == "." else "")
           for zones in SETS]
    out += [zone_set_text([("r.test.", dname_to_apex("r.test."), chain)])
            for chain in ("", "nsec", "nsec3", "nsec3-opt-out")]
    out += [zone_set_text([("example.", FORMS, "nsec")], "lenient minimal")]
    return out


def reader_seeds() -> list[bytes]:
    paths = [*TESTS.glob("zones/**/*.zone"), *DIFFERENTIAL.glob("**/*.zone"),
             *(HERE / "zones").glob("*.zone"), *(ROOT / "zones").glob("*.zone")]
    return [path.read_bytes() for path in sorted(paths)] + [FORMS.encode(),
                                                             dname_to_apex("example.").encode()]


def write(directory: Path, seeds: list[bytes]) -> None:
    """The seeds as seed-SHA1 files; the inputs of findings (finding-*) stay."""
    directory.mkdir(parents=True, exist_ok=True)
    wanted = {"seed-" + hashlib.sha1(seed).hexdigest(): seed for seed in seeds if len(seed) <= LARGEST}
    for old in directory.iterdir():
        if old.name not in wanted and old.name.startswith("seed-"):
            old.unlink()
    for name, seed in wanted.items():
        (directory / name).write_bytes(seed)


def main() -> None:
    write(CORPUS / "reader", reader_seeds())
    write(CORPUS / "core", core_seeds())


if __name__ == "__main__":
    main()
