"""Make the man pages from the manual's sources: docs/man/NAME.rst, which include the text of
the manual's pages, become OUTDIR/NAME (by default man/, where they are committed, so
that installing zonebake needs no docutils). `make man` runs this; tests/docs checks that the
committed pages are what it makes.

    python docs/manpages.py [OUTDIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils.core import publish_file

DOCS = Path(__file__).resolve().parent
PAGES = ("zonebake.1", "zonebake-server.8", "zonebake.toml.5")
# A warning (an include marker not found, a reference that goes nowhere) stops the making:
# a man page is not made with a hole in it. No date or generator line, so that the same
# sources make the same bytes.
SETTINGS = {"halt_level": 2, "report_level": 2, "exit_status_level": 2, "datestamp": None,
            "generator": False, "output_encoding": "utf-8"}


def make(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    made = []
    for page in PAGES:
        target = outdir / page
        publish_file(source_path=str(DOCS / "man" / f"{page}.rst"),
                     destination_path=str(target), writer="manpage",
                     settings_overrides=SETTINGS)
        made.append(target)
    return made


if __name__ == "__main__":
    make(Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS.parent / "man")
