"""The man pages in man/ are what `make man` makes from the manual (docs/), and man renders
each without a warning, in 80 columns."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import pytest

from conftest import ROOT, require
from manpage import MAN

PAGES = ("zonebake.1", "zonebake-server.8", "zonebake.toml.5")


def docutils_pinned() -> str:
    """The docutils version the test extra pins: the one whose pages are committed."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    (pin,) = [spec.split("==")[1] for spec in extra if spec.startswith("docutils==")]
    return pin


def need_docutils() -> None:
    """Skip (fail under CI) without the docutils the committed pages were made with."""
    try:
        import docutils
    except ImportError:
        docutils = None
    pinned = docutils_pinned()
    if docutils is None or docutils.__version__ != pinned:
        why = (f"docutils {pinned} is needed to make the man pages as they are committed "
               f"(found: {docutils.__version__ if docutils else 'none'}); "
               f"pip install -e '.[test]'")
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def test_the_committed_man_pages_are_what_make_man_makes(tmp_path):
    need_docutils()
    subprocess.run([sys.executable, str(ROOT / "docs" / "manpages.py"), str(tmp_path)],
                   check=True)
    stale = [page for page in PAGES
             if (tmp_path / page).read_bytes() != (MAN / page).read_bytes()]
    assert not stale, (f"man/{', man/'.join(stale)} differ from what the manual (docs/) makes: "
                       f"run make man and commit the pages")


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "docs").glob("*.rst")))
def test_each_page_of_the_manual_reads_without_a_warning(page):
    """The pages the man pages do not include are read here: a table out of line, a link
    that goes nowhere."""
    need_docutils()
    from docutils.core import publish_doctree
    from docutils.utils import SystemMessage

    source = ROOT / "docs" / page
    try:
        publish_doctree(source.read_text(), source_path=str(source),
                        settings_overrides={"halt_level": 2, "report_level": 5})
    except SystemMessage as exc:
        pytest.fail(f"docs/{page}: {exc}")


def render(page, width: int = 80) -> subprocess.CompletedProcess:
    (man,) = require("man-db", "man")
    env = {**os.environ, "MANWIDTH": str(width), "MANPAGER": "cat", "PAGER": "cat",
           "LANG": "C.UTF-8"}
    return subprocess.run([man, "-l", str(page)], capture_output=True, text=True, env=env,
                          timeout=30)


@pytest.mark.parametrize("page", PAGES)
def test_man_renders_each_page_cleanly_in_80_columns(page):
    shown = render(MAN / page)
    assert shown.returncode == 0 and not shown.stderr, shown.stderr
    name = page.rsplit(".", 1)[0]
    assert re.search(rf"^ +{re.escape(name)} +- ", shown.stdout, re.M), shown.stdout[:400]
    wide = [line for line in shown.stdout.splitlines() if len(line) > 80]
    assert not wide, f"man/{page} has lines wider than 80 columns:\n" + "\n".join(wide)
