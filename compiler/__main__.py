"""`python -m zonebake` is the `zonebake` command."""

import sys

from .cli import main

sys.exit(main())
