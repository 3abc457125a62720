"""The compiler's core: the zone semantics, written once, in C (the .c and .h files here,
bake.h lists them), compiled on first use (program.py) and run on a zone set (run.py)."""
