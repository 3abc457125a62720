"""zonebake: compile DNS zone files into a static authoritative responder.

The compiler is a Python shell around one C core: the shell reads the configuration, has
dnspython read the zone files the core's fast reader does not, runs the core (checks, name
tree, answers, serialization, perfect hash, layout), renders zonedata.c and links the server.
"""

__version__ = "0.1.0"
