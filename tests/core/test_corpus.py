"""The compiler's core (compiler/core/: the C files, run by run.py) on its corpus,
tests/zones/native/, and with the command line around it.

- accepted/: sets the fast reader reads: built without a word, and to the same bytes as when
  dnspython reads every file and hands the records over (two readers, one core).
- diagnosed/: sets with an error or a warning: the core reports it (words, position, order;
  --lenient), the same whichever reader read the files; a set with errors writes nothing.
- declined/: files the fast reader leaves to dnspython: built through the hand-over, without
  a word, and the fast reader says why it leaves them.
- spelled/: a name written in two letter cases is served in its first spelling.
"""

from __future__ import annotations

import os
import resource
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dns.name
import pytest

from blob import Blob, server_data
from conftest import ZONES, bake_outcome, data_beside, load_toml_text
from gen import write_zone, write_zoneset
from zonebake.config import load_toml
from zonebake.core import run as core
from zonebake.errors import CompileError
from zonebake.read.zonefile import parse_zone


NATIVE = ZONES / "native"
OUTPUTS = ("zonedata.c", "zonedata.state")
IMAGE = "zonedata.image"  # a set of one zone's records as read (compiler/core/read/image.c)
NEXT = "zonedata.next"  # the next build's manifest, begun before its imports (core/early.py)
EXIT_USAGE = 2


def _sets(kind: str) -> list[str]:
    return sorted(p.name for p in (NATIVE / kind).iterdir() if (p / "zonebake.toml").is_file())


def _generated_zone(directory: Path) -> Path:
    """A hosting provider's zone of 3,000 names: sites, aliases, glued delegations."""
    directory.mkdir(parents=True)
    write_zone(directory / "scale.example.zone", 3000)
    config = directory / "zonebake.toml"
    config.write_text('[[zone]]\norigin = "scale.example."\nfile = "scale.example.zone"\n')
    return config


def _generated_zoneset(directory: Path) -> Path:
    """Thirty customer zones sharing name servers outside the set."""
    return write_zoneset(directory, 30)


GENERATED = {"gen-zone-3000": _generated_zone, "gen-zoneset-30": _generated_zoneset}
ACCEPTED = _sets("accepted")

# What each diagnosed set makes the core say (exit status, a diagnostic among them).
DIAGNOSED = {
    # Served with a warning.
    "duplicate": (0, "warning: duplicate record www.example.test. A dropped"),
    "ttl-differ": (0, "warning: TTL 600 differs from 300"),
    "unused-glue": (0, "warning: stray.sub.example.test. A lies below a delegation"),
    "mx-target-cname": (0, "warning: example.test. MX mail.example.test. is an alias"),
    "soa-minimum": (0, "warning: SOA MINIMUM 86401 is over a day"),
    "dname-loop": (0, "warning: loop.example.test. DNAME deeper.loop.example.test.: the target "
                   "lies below the owner"),
    # Refused.
    "ns-target-cname": (1, "error: sub.example.test. NS alias.example.test.: no A or AAAA"),
    "missing-glue": (1, "error: sub.example.test. NS ns.sub.example.test.: no A or AAAA"),
    "cname-and-data": (1, "error: www.example.test. has a CNAME and TXT data"),
    "two-cnames": (1, "error: a second CNAME record at www.example.test."),
    "out-of-zone": (1, "error: www.example.net. is outside the zone example.test."),
    "no-soa": (1, "error: no SOA record at the zone apex example.test."),
    "no-ns": (1, "error: no NS records at the zone apex example.test."),
    "oversized": (1, "error: the response for fat.example.test. would be 69194 octets"),
    "include-error": (1, "include-error/hosts.inc:2: error: elsewhere.example.net. is outside"),
    "not-utf8": (1, "not-utf8/example.test.zone:6: error: not UTF-8 text: octet 0xe9"),
}
# What the fast reader says as it leaves each declined set to dnspython.
DECLINED = {
    "generate": "$GENERATE the full reader must read",
    "other-type": "type LOC",
    "unicode-name": "example.test.zone:6: octets outside ASCII in a name",
}


@dataclass
class Build:
    outdir: Path
    returncode: int
    stderr: str

    def output(self, name: str) -> bytes:
        return (self.outdir / name).read_bytes()

    def diagnostics(self, prefix: str) -> list[str]:
        """The lines naming a zone file (FILE:LINE: error|warning: ...)."""
        return [line for line in self.stderr.splitlines() if line.startswith(prefix)]


def run_build(config: Path, outdir: Path, *flags: str, env: dict | None = None) -> Build:
    result = subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "-c", str(config),
                             "-o", str(outdir), *flags], capture_output=True, text=True,
                            env=env, timeout=600)
    return Build(outdir, result.returncode, result.stderr)


def bake_both_ways(config_path: Path, tmp_path: Path) -> tuple[bytes, bytes]:
    """zonedata.bin as the core makes it from the fast reader, and from dnspython's reading."""
    config = load_toml(config_path)
    fast, slow = tmp_path / "fast.bin", tmp_path / "dnspython.bin"
    core.bake(config, fast)
    core.bake(config, slow, dnspython_reads=True)
    return fast.read_bytes(), slow.read_bytes()


@pytest.mark.parametrize("name", ACCEPTED + list(GENERATED))
def test_accepted_set_reads_the_same_with_either_reader(name, tmp_path):
    if name in GENERATED:
        config = GENERATED[name](tmp_path / "zones")
    else:
        config = NATIVE / "accepted" / name / "zonebake.toml"
    baked = core.bake(load_toml(config), tmp_path / "plain.bin", hand_over=False)
    assert baked.warnings == (), "the set must compile without a word"
    fast, slow = bake_both_ways(config, tmp_path)
    assert fast == slow


@pytest.mark.parametrize("name", sorted(DIAGNOSED))
@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_diagnosed_set_is_reported(name, lenient, tmp_path):
    """Errors and warnings with their positions; a set with errors writes nothing."""
    directory = NATIVE / "diagnosed" / name
    build = run_build(directory / "zonebake.toml", tmp_path / "out",
                      *(["--lenient"] if lenient else []))
    exit_status, diagnostic = DIAGNOSED[name]
    if lenient and name in ("missing-glue", "ns-target-cname"):
        exit_status, diagnostic = 0, diagnostic.replace("error:", "warning:")
    said = build.diagnostics(str(directory))
    assert build.returncode == exit_status, build.stderr
    assert any(diagnostic in line for line in said), build.stderr
    if exit_status:
        assert not build.outdir.exists(), "a set with errors writes nothing"
    config = load_toml(directory / "zonebake.toml")
    fast, slow = [], []
    for reader, outcome in ((False, fast), (True, slow)):
        try:
            baked = core.bake(config, tmp_path / "data.bin", lenient=lenient,
                                dnspython_reads=reader)
            outcome += [str(d) for d in baked.warnings]
        except CompileError as exc:
            outcome += [str(d) for d in exc.diagnostics]
    assert fast == slow, "either reader, the same words"


def test_every_diagnosed_set_says_what_it_makes_the_core_say():
    assert sorted(DIAGNOSED) == _sets("diagnosed")


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_declined_set_is_read_by_dnspython(name, tmp_path):
    directory = NATIVE / "declined" / name
    config = load_toml(directory / "zonebake.toml")
    with pytest.raises(core.Unreadable) as declined:
        core.bake(config, tmp_path / "data.bin", hand_over=False)
    assert DECLINED[name] in str(declined.value)
    build = run_build(directory / "zonebake.toml", tmp_path / "out")
    assert build.returncode == 0 and build.stderr == "", build.stderr
    fast, slow = bake_both_ways(directory / "zonebake.toml", tmp_path)
    assert fast == slow


def test_every_declined_set_says_why():
    assert sorted(DECLINED) == _sets("declined")


# The fields of record types that hold names (NS, CNAME, PTR, SRV; MX; SOA).
NAME_FIELDS = ("target", "exchange", "mname", "rname")


@pytest.mark.parametrize("name", _sets("spelled"))
def test_a_name_spelled_two_ways_is_served_in_its_first_spelling(name, tmp_path):
    """Names compare without regard to case (RFC 4343 §3): the core keeps one spelling of a
    name, the first the set gives it, and serves it everywhere."""
    config = load_toml(NATIVE / "spelled" / name / "zonebake.toml")
    baked = core.bake(config, tmp_path / "zonedata.bin")
    served = Blob.read(tmp_path / "zonedata.bin", baked.layout).served()
    first: dict[dns.name.Name, tuple[bytes, ...]] = {}
    for source in config.zones:
        first.setdefault(source.origin, source.origin.labels)
        for record in parse_zone(source).records:
            for spelled in (record.name, *(getattr(record.rdata, f, None) for f in NAME_FIELDS)):
                if isinstance(spelled, dns.name.Name):
                    first.setdefault(spelled, spelled.labels)
    checked = 0
    for answers in served.values():
        for message in answers.values():
            for rrset in getattr(message, "answer", []) + getattr(message, "additional", []):
                names = [rrset.name] + [rd.target for rd in rrset if hasattr(rd, "target")]
                for spelled in names:
                    if spelled in first and spelled != message.question[0].name:
                        assert spelled.labels == first[spelled], (name, spelled)
                        checked += 1
    assert checked > 0


def test_build_writes_what_the_core_made_and_says_nothing(tmp_path):
    config = GENERATED["gen-zone-3000"](tmp_path / "zones")
    build = run_build(config, tmp_path / "out")
    assert build.returncode == 0 and build.stderr == "", build.stderr
    assert sorted(os.listdir(build.outdir)) == sorted(OUTPUTS + ("zonebake-server", IMAGE,
                                                                NEXT))
    baked = core.bake(load_toml(config), tmp_path / "again.bin")
    data = data_beside(build.outdir).read_bytes()  # the server's: no zonedata.bin beside it
    assert data == (tmp_path / "again.bin").read_bytes()
    # The layout's numbers are the data's head (runtime/zonedata.h, struct zb_head).
    head = struct.unpack_from("<QQIIII", data)
    layout = baked.layout
    assert head == (len(data), layout.seed, layout.groups_off, layout.ngroups,
                    layout.group_mask, layout.nanswers) and len(data) == layout.data_size


def test_a_build_over_the_last_one_replaces_every_file(tmp_path):
    """The new server, its data inside, goes in place of the last build's:
    the outputs are the new set's, as a build into an empty directory writes them."""
    first = GENERATED["gen-zone-3000"](tmp_path / "first")
    second = NATIVE / "accepted" / ACCEPTED[0] / "zonebake.toml"
    outdir, fresh = tmp_path / "out", tmp_path / "fresh"
    for config, into in ((first, outdir), (second, outdir), (second, fresh)):
        subprocess.run([sys.executable, "-m", "zonebake", "build", "-c", str(config), "-o",
                        str(into), "-q"], check=True)
    assert sorted(os.listdir(outdir)) == sorted(os.listdir(fresh))
    assert set(OUTPUTS + ("zonebake-server",)) <= set(os.listdir(fresh))
    # A sanitizer build (-g) records the directory zonedata.c was compiled in: its server
    # differs, not the data inside it.
    compared = [name for name in os.listdir(fresh)
                if name != "zonebake-server" or not os.environ.get("ZONEBAKE_SANITIZE")]
    for name in compared:
        assert (outdir / name).read_bytes() == (fresh / name).read_bytes(), name
    assert server_data(outdir / "zonebake-server") == server_data(fresh / "zonebake-server")


def test_a_core_that_cannot_be_compiled_stops_the_build(tmp_path):
    """A core that cannot be compiled is a usage error naming the compiler's words; the
    build writes nothing."""
    cc = tmp_path / "cc-without-core"
    cc.write_text('#!/bin/sh\ncase "$*" in *core/main.c*) echo "no core here" >&2; exit 1;; '
                  'esac\nexec cc "$@"\n')
    cc.chmod(0o755)
    config = GENERATED["gen-zoneset-30"](tmp_path / "zones")
    env = {**os.environ, "CC": str(cc), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    build = run_build(config, tmp_path / "out", env=env)
    assert build.returncode == EXIT_USAGE, build.stderr
    assert "the C compiler failed" in build.stderr and "no core here" in build.stderr
    assert "Traceback" not in build.stderr
    assert not build.outdir.exists()


def test_a_core_failing_as_it_writes_leaves_the_last_build_as_it_was(tmp_path):
    """The server is compiled and linked while the core writes the data, in a directory of
    its own: when the core fails then (here it may not write more than 256 KiB), that is
    abandoned, and the output directory keeps the last build's files, unchanged."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    outdir = tmp_path / "out"
    first = GENERATED["gen-zoneset-30"](tmp_path / "first")
    subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "-c", str(first), "-o",
                    str(outdir)], env=env, check=True)
    before = {name: (outdir / name).read_bytes() for name in os.listdir(outdir)}
    second = GENERATED["gen-zone-3000"](tmp_path / "second")  # 1.5 MiB of data

    def limit_writes():
        resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 10, 256 << 10))

    result = subprocess.run([sys.executable, "-m", "zonebake", "build", "-q", "-c", str(second),
                             "-o", str(outdir)], env=env, capture_output=True, text=True,
                            preexec_fn=limit_writes)
    assert result.returncode == EXIT_USAGE, result.stderr
    assert "the compiler's core failed" in result.stderr
    assert {name: (outdir / name).read_bytes() for name in os.listdir(outdir)} == before


PLAIN_ZONE = ("$ORIGIN example.test.\n$TTL 300\n@ SOA ns hostmaster 1 7200 900 1209600 300\n"
              "@ NS ns\nns A 192.0.2.1\n")


@pytest.mark.parametrize("octet, reason", [(b"\0", "a NUL octet"),
                                           (b"\xc3", "octets outside ASCII that are not UTF-8"),
                                           (b"\xed\xa0\x80", "not UTF-8"),  # a surrogate
                                           (b"\xc0\xaf", "not UTF-8"),  # overlong
                                           (b"\r", "a carriage return alone")])
def test_octets_the_reader_leaves_to_dnspython_are_found_at_every_offset(octet, reason,
                                                                         tmp_path):
    """The reader scans the file eight octets at a time: an odd octet must be found wherever
    it falls in a word, and in the tail that is not a whole word."""
    zone = tmp_path / "example.test.zone"
    config = load_toml_text(tmp_path, zone)
    for padding in range(17):
        zone.write_bytes(PLAIN_ZONE.encode() + b";" + b"x" * padding + octet + b"x\n")
        with pytest.raises(core.Unreadable, match=reason):
            core.bake(config, tmp_path / "zonedata.bin", hand_over=False)
        zone.write_bytes(PLAIN_ZONE.encode() + b";" + b"x" * padding + octet)
        with pytest.raises(core.Unreadable, match=reason):
            core.bake(config, tmp_path / "zonedata.bin", hand_over=False)
    zone.write_bytes(PLAIN_ZONE.encode() + b"; \r\n")  # CR LF is a line end
    core.bake(config, tmp_path / "zonedata.bin", hand_over=False)
    assert (tmp_path / "zonedata.bin").stat().st_size > 0


READ_BOTH_WAYS = [
    "ttl 1h30m A 192.0.2.7", "ttl 1W2d IN A 192.0.2.7", "ttl IN 2H A 192.0.2.7",
    "ttl 0s A 192.0.2.7", "ttl 4294967295 A 192.0.2.7", "ttl 4294967296 A 192.0.2.7",
    "ttl 2h30 A 192.0.2.7", "ttl 1x A 192.0.2.7", "ttl h A 192.0.2.7",
    'txt TXT "a\\\\b" "\\065\\066" "say \\"hi\\"" "semi;colon"', 'txt TXT "\\256"',
    'txt TXT "\\06"', 'txt TXT "end\\"', 'txt TXT "x" ; "comment"',
    "sub 1h NS ns1", "old DNAME new.example.test.", "old DNAME new",
]


@pytest.mark.parametrize("record", READ_BOTH_WAYS)
def test_a_record_reads_as_dnspython_reads_it(record, tmp_path):
    """TTL units and string escapes the fast reader reads (or leaves to dnspython, or which
    both refuse): the same bytes or the same words either way."""
    zone = tmp_path / "example.test.zone"
    zone.write_text("$TTL 1h\n@ SOA ns1 hostmaster 1 2h 15M 2w 1h\n@ NS ns1\n"
                    "ns1 A 192.0.2.1\n" + record + "\n")
    config = load_toml_text(tmp_path, zone)
    fast = bake_outcome(config, tmp_path / "fast.bin")
    assert fast == bake_outcome(config, tmp_path / "dnspython.bin", dnspython_reads=True)
