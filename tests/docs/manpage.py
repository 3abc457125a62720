"""Reading the man pages in man/ as docutils' man page writer makes them (docs/manpages.py):
sections (.SH), subsections (.SS), and the terms of definition lists (.TP, then the term on
the next line), where every option, command and key is documented."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

MAN = ROOT / "man"
# An option in a term: a dash that does not follow a letter, digit or dash (udp-size is a
# key, not an option).
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


@dataclass(frozen=True)
class Entry:
    section: str     # the .SH title, e.g. OPTIONS
    subsection: str  # the .SS title under it, or ""
    term: str        # as the page shows it, e.g. "-c TOML, --config TOML"

    @property
    def options(self) -> list[str]:
        return OPTION.findall(self.term)


def plain(roff: str) -> str:
    """Text from a line of roff as docutils writes it: requests, font changes, escapes gone."""
    text = re.sub(r"^\.(?:B|I|BI|SH|SS)\s+", "", roff)
    text = re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-").replace("\\(dq", '"')
    text = text.replace("\\(aq", "'").replace("\\e", "\\").replace("\\&", "")
    return text.strip()


def entries(page: str) -> list[Entry]:
    found, section, subsection = [], "", ""
    lines = (MAN / page).read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            section, subsection = plain(line), ""
        elif line.startswith(".SS "):
            subsection = plain(line)
        elif line == ".TP" and i + 1 < len(lines):
            found.append(Entry(section, subsection, plain(lines[i + 1])))
    return found
