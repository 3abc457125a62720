"""`python -m zonebake` is the `zonebake` command."""

from .cli import run

run()
