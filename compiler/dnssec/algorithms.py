"""The DNSSEC algorithms zonebake makes keys for and signs with (RFC 8624 §3.1: both
RECOMMENDED for signing), by the names `zonebake keygen -a` takes and by number; apart from
keys.py so that the command line can offer them without loading `cryptography`."""

ALGORITHMS = {"ed25519": 15, "ecdsap256sha256": 13}
MNEMONICS = {15: "ED25519", 13: "ECDSAP256SHA256"}
