"""DNSSEC around the core: key pairs in BIND's format (keys.py: `zonebake keygen` and `ds` write
and print them, the signer reads them), the signatures of a zone signed at build time
(signing.py) and every signature of a signed zone verified (signatures.py). The core
(core/dnssec/) decides what is signed and what is checked; this package does the
cryptography, on every processor."""
