"""A zone signed by dnssec-signzone (bind9-utils), as the benchmark and the scale report serve
it: one Ed25519 key with the SEP flag that signs everything (a combined signing key, which
Knot's `dnssec-validation` accepts as both KSK and ZSK), NSEC or NSEC3 with no salt and 0
iterations (RFC 9276). Made once per directory: 100,000 names take half a minute a kind, a
million seven minutes."""

from __future__ import annotations

import subprocess
from pathlib import Path

CHAINS = {"nsec": [], "nsec3": ["-3", "-", "-H", "0"],
          "nsec3-optout": ["-3", "-", "-H", "0", "-A"]}


def sign(zone: Path, origin: str, directory: Path, kinds=("nsec", "nsec3")) -> dict[str, Path]:
    """The signed files by chain kind, in `directory`."""
    signed = {kind: directory / f"signed.{kind}.zone" for kind in kinds}
    if all(path.exists() for path in signed.values()):
        return signed
    directory.mkdir(parents=True, exist_ok=True)
    key = subprocess.run(["dnssec-keygen", "-q", "-f", "KSK", "-a", "ED25519", "-K",
                          str(directory), origin], capture_output=True, text=True,
                         check=True).stdout.strip()
    unsigned = directory / "unsigned.zone"
    unsigned.write_text(zone.read_text() + (directory / f"{key}.key").read_text())
    for kind in kinds:
        partial = signed[kind].with_suffix(".partial")
        subprocess.run(["dnssec-signzone", "-q", "-z", "-S", "-K", str(directory), "-o", origin,
                        *CHAINS[kind], "-f", str(partial), str(unsigned)], check=True,
                       cwd=directory, capture_output=True)
        partial.rename(signed[kind])
    unsigned.unlink()
    return signed


def sign_salted(unsigned: str, origin: str, directory: Path, salt: str, iterations: int,
                keygen: str = "dnssec-keygen", signzone: str = "dnssec-signzone") -> Path:
    """UNSIGNED (a zone's text) signed with NSEC3 of that salt (hex) and those iterations,
    with a new key: DIRECTORY/signed.zone."""
    key = subprocess.run([keygen, "-q", "-f", "KSK", "-a", "ED25519", "-K", str(directory),
                          origin], capture_output=True, text=True, check=True).stdout.strip()
    keyed = directory / "unsigned.zone"
    keyed.write_text(unsigned + (directory / f"{key}.key").read_text())
    signed = directory / "signed.zone"
    subprocess.run([signzone, "-q", "-z", "-S", "-K", str(directory), "-o", origin, "-3", salt,
                    "-H", str(iterations), "-f", str(signed), str(keyed)], check=True,
                   cwd=directory, capture_output=True)
    return signed
