"""zonebake: compile DNS zone files into a static authoritative responder.

The compiler runs as a pipeline of stages, one module each, data flowing one way:
config -> parse -> validate -> tree -> answers -> wire -> phash -> layout -> emit -> cc.
"""

__version__ = "0.1.0"

from . import names as _names  # noqa: E402,F401  (installs faster name hashing first)
