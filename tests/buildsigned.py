"""Zone sets the build signs (issue 17): key pairs made by `zonebake keygen`, an unsigned zone
with every case a signed answer has (apex, CNAME, wildcard, empty non-terminal, an insecure
and a secure delegation with glue), and the zonebake.toml with its `dnssec` table."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

import dns.name

from conftest import run_zonebake

ORIGIN = dns.name.from_text("example.com.")
# The signing time of the builds of a run (SOURCE_DATE_EPOCH): today's midnight UTC, so that
# their signatures are alike (and cached) within a run, and never expired when it runs.
EPOCH = int(time.time()) // 86400 * 86400

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


# Every form the writer has, and some it does not (SVCB, LOC, RP, a private type): text with
# quotes, backslashes, spaces and octets past ASCII; names with a dot, a space and a
# parenthesis in a label; an empty TXT string.
EVERY_FORM = r"""
txt TXT "plain" "with \"quotes\" and \\ and  spaces" "\200\255\000" ""
spf SPF "v=spf1 -all"
hinfo HINFO "PC" "Linux 6"
srv SRV 10 20 5060 sip.example.net.
naptr NAPTR 100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .
caa CAA 0 issue "ca.example.net; account=\"1\""
caa CAA 128 iodef "mailto:security@example.com"
sshfp SSHFP 4 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
_443._tcp TLSA 3 1 1 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
ptr PTR host.example.net.
dn DNAME target.example.net.
six AAAA 2001:db8::53
six AAAA ::ffff:192.0.2.1
kx KX 10 kx.example.net.
svc SVCB 1 svc.example.net. alpn=h2 port=8443
loc LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m
rp RP admin.example.com. txt.example.com.
private TYPE65280 \# 3 ABCDEF
empty TYPE65281 \# 0
a\.dot A 192.0.2.11
a\032space A 192.0.2.12
paren\( MX 5 a\.dot.example.com.
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
