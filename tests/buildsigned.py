"""Zone sets the build signs (issue 17): key pairs made by `zonebake keygen`, an unsigned zone
with every case a signed answer has (apex, CNAME, wildcard, empty non-terminal, an insecure
and a secure delegation with glue), and the zonebake.toml with its `dnssec` table."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import dns.name

from conftest import run_zonebake

ORIGIN = dns.name.from_text("example.com.")

ZONE = """$ORIGIN example.com.
$TTL 3600
@ IN SOA ns1 hostmaster 2026112601 7200 3600 1209600 300
@ NS ns1
@ NS ns2
@ A 192.0.2.1
@ MX 10 mail
ns1 A 192.0.2.53
ns2 A 192.0.2.54
mail A 192.0.2.25
www CNAME @
*.wild TXT "wildcard"
a.b.ent A 192.0.2.7
sub NS ns.sub
ns.sub A 192.0.2.99
secure NS ns.secure
secure DS 12345 15 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
ns.secure A 192.0.2.98
"""


def dname_to_apex(origin: str) -> str:
    """Issue 37's zone: a DNAME to its own apex, which crashed the core signed."""
    return (f"$ORIGIN {origin}\n$TTL 600\n@ SOA ns1 hostmaster 7 3600 900 604800 120\n"
            f"@ NS ns1\nns1 A 192.0.2.1\ndn2 DNAME {origin}\n")


def keygen(directory: Path, origin: str = "example.com.", algorithm: str = "ed25519",
           ksk: bool = False) -> str:
    """A key pair in `directory`; its files' name without the suffix."""
    directory.mkdir(parents=True, exist_ok=True)
    made = run_zonebake("keygen", origin, "--algorithm", algorithm, *(["--ksk"] if ksk else []),
                        "-d", str(directory))
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def signed_set(directory: Path, denial: str = "nsec3", opt_out: bool = False,
               zone: str = ZONE, keys: Path | None = None, extra: str = "") -> Path:
    """zonebake.toml for example.com. signed with a KSK and a ZSK (Ed25519) made in
    directory/keys unless `keys` names a directory of pairs already made."""
    if keys is None:
        keys = directory / "keys"
        keygen(keys, ksk=True)
        keygen(keys)
    (directory / "example.com.zone").write_text(zone)
    toml = directory / "zonebake.toml"
    toml.write_text(f'[[zone]]\norigin = "example.com."\nfile = "example.com.zone"\n'
                    f'dnssec = {{ keys = "{keys}", denial = "{denial}", '
                    f'nsec3-opt-out = {str(opt_out).lower()} }}\n{extra}')
    return toml


def build(toml: Path, outdir: Path, *args: str, epoch: int | None = None,
          cache: Path | None = None) -> subprocess.CompletedProcess:
    """`zonebake build`, with SOURCE_DATE_EPOCH and the cache directory when given."""
    env = dict(os.environ)
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = str(epoch)
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run([sys.executable, "-m", "zonebake", "build", "-c", str(toml), "-o",
                           str(outdir), *args], capture_output=True, text=True, env=env)


def private_octets(key_file: Path) -> bytes:
    """The private key of a pair (its .private file's PrivateKey field, decoded)."""
    for line in key_file.with_suffix(".private").read_text().splitlines():
        if line.startswith("PrivateKey:"):
            return base64.b64decode(line.split(":", 1)[1].strip())
    raise AssertionError(f"no PrivateKey in {key_file.with_suffix('.private')}")
