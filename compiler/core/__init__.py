"""The compiler's core: the zone semantics, written once, in C (the .c and .h files here and
in base/, read/, semantics/, dnssec/ and layout/, a folder per layer; bake.h lists them),
compiled on first use (program.py) and run on a zone set (run.py)."""
