"""The C toolchain around the core's output: the runtime's objects compiled once, zonedata.c
compiled and the server linked, the data spliced in, every output put in place atomically."""
