"""`python -m zonebake` is the `zonebake` command."""

from .entry import run

run()
