"""The native baker (compiler/bake/, driven by compiler/native.py) against the Python pipeline.

`ZONEBAKE_NATIVE` chooses: `0`, the Python pipeline alone; `require`, the baker, and when it
declines a zone set, exit status 2 and `zonebake: the native baker declined: REASON`; unset,
the baker, and the Python pipeline for a set it declines.

tests/zones/native/accepted/ holds zone sets inside the baker's subset, chosen to stress
byte-exactness: both pipelines must write byte-identical zonedata.bin and zonedata.c. Each of
them builds warning-free. tests/zones/native/diagnosed/ holds sets with an error or a warning:
the baker must report exactly what the Python pipeline reports, and build the same bytes
when there is no error. tests/zones/native/declined/ holds one set per reason the baker
declines: `require` must refuse it, and the default must do exactly what the Python pipeline
does.

The comparisons run in this process (the baker, then the pipeline, then the template), with no
C compiler run; `check` shows what each mode says about a declined set. Two tests build with
the command line in every mode, compiling the server, to cover the plumbing end to end.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dns.name
import pytest

from blob import served
from conftest import ZONES
from zonebake import emit, native
from zonebake.build import compile_zoneset
from zonebake.config import load_toml
from zonebake.fastparse import parse_plain
from zonebake.parse import parse_zone

sys.path.insert(0, str(Path(__file__).parent / "scale"))
from gen import write_zone, write_zoneset  # noqa: E402

NATIVE = ZONES / "native"
OUTPUTS = ("zonedata.bin", "zonedata.c")
DECLINED_PREFIX = "zonebake: the native baker declined: "
EXIT_DECLINED = 2
NEWLINE = b"\n"


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

# What the Python pipeline does with each declined set (exit status, a diagnostic it prints),
# so that the set keeps meaning what its name says. None: no diagnostic at all.
PYTHON_SAYS = {
    # Served without a word: outside the baker's subset only.
    "dname": (0, None),
    "include": (0, None),
    "generate": (0, None),
    "escape": (0, None),
    "other-type": (0, None),
    "ttl-unit": (0, None),
    "ttl-directive-unit": (0, None),
    "soa-unit": (0, None),
    "no-ttl": (0, None),
}
# Declined by the fast reader only: dnspython reads them and hands the records to the baker
# (compiler/handover.py), which then compiles them as the Python pipeline does.
READ_BY_DNSPYTHON = {"dname", "escape", "generate", "include", "no-ttl", "other-type", "soa-unit",
                     "ttl-directive-unit", "ttl-unit"}

# What each diagnosed set makes both pipelines say (exit status, a diagnostic among them).
DIAGNOSED = {
    # Served with a warning.
    "duplicate": (0, "warning: duplicate record www.example.test. A dropped"),
    "ttl-differ": (0, "warning: TTL 600 differs from 300"),
    "unused-glue": (0, "warning: stray.sub.example.test. A lies below a delegation"),
    "mx-target-cname": (0, "warning: example.test. MX mail.example.test. is an alias"),
    "soa-minimum": (0, "warning: SOA MINIMUM 86401 is over a day"),
    # Refused.
    "ns-target-cname": (1, "error: sub.example.test. NS alias.example.test.: no A or AAAA"),
    "missing-glue": (1, "error: sub.example.test. NS ns.sub.example.test.: no A or AAAA"),
    "cname-and-data": (1, "error: www.example.test. has a CNAME and TXT data"),
    "two-cnames": (1, "error: a second CNAME record at www.example.test."),
    "out-of-zone": (1, "error: www.example.net. is outside the zone example.test."),
    "no-soa": (1, "error: no SOA record at the zone apex example.test."),
    "no-ns": (1, "error: no NS records at the zone apex example.test."),
    "oversized": (1, "error: the response for fat.example.test. would be 69194 octets"),
}


@dataclass
class Build:
    mode: str | None  # the value of ZONEBAKE_NATIVE, None for unset
    outdir: Path
    returncode: int
    stderr: str

    def output(self, name: str) -> bytes:
        return (self.outdir / name).read_bytes()

    def diagnostics(self, prefix: str) -> list[str]:
        """The lines naming a zone file (FILE:LINE: error|warning: ...): the ones that must not
        depend on which pipeline ran."""
        return [line for line in self.stderr.splitlines() if line.startswith(prefix)]


def run_in_parallel(command: str, config: Path, tmp_path: Path, *modes: str | None,
                    lenient: bool = False) -> list[Build]:
    """`zonebake COMMAND -c CONFIG -q` once per ZONEBAKE_NATIVE mode, all at once; a build goes
    into a directory of its own."""
    started = []
    for mode in modes:
        env = {k: v for k, v in os.environ.items() if k != "ZONEBAKE_NATIVE"}
        if mode is not None:
            env["ZONEBAKE_NATIVE"] = mode
        outdir = tmp_path / f"out-native-{mode if mode is not None else 'unset'}"
        output = ["-o", str(outdir)] if command == "build" else []
        flags = ["--lenient"] if lenient else []
        process = subprocess.Popen([sys.executable, "-m", "zonebake", command, "-c",
                                    str(config), *output, "-q", *flags], env=env, text=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append((mode, outdir, process))
    builds = []
    for mode, outdir, process in started:
        _, stderr = process.communicate(timeout=600)
        builds.append(Build(mode, outdir, process.returncode, stderr))
    return builds


def outputs_in_process(config_path: Path, data_file: Path) -> tuple[dict, dict]:
    """zonedata.bin and zonedata.c as the Python pipeline and as the baker make them."""
    config = load_toml(config_path)
    compiled = compile_zoneset(config)
    assert compiled.warnings == [], "the set must compile without a warning"
    python = {"zonedata.bin": compiled.layout.data,
              "zonedata.c": emit.render(config, compiled.layout,
                                        compiled.tree.max_labels).encode()}
    baked = native.bake(config, data_file)
    return python, {"zonedata.bin": data_file.read_bytes(),
                    "zonedata.c": emit.render(config, baked.layout, baked.max_labels).encode()}


def _region(offset: int, python_c: str) -> str:
    """Which part of zonedata.bin an offset falls in (compiler/layout.py), from the tables'
    offsets in the Python build's zonedata.c."""
    starts = {name: int(off) for name, off in re.findall(
        r"\.(nodes|types|pilots) = \(const [^)]*\)\(zb_data \+ (\d+)\)", python_c)}
    buckets = re.search(r"\.nbuckets = (\d+)u", python_c)
    if len(starts) != 3 or buckets is None:
        return "zonedata.c names no tables"
    # The pilots are 16-bit; the answers follow, 8-byte aligned, then the names.
    starts["answers and names"] = (starts["pilots"] + 2 * int(buckets.group(1)) + 7) & ~7
    region = "before the tables"
    for name, start in sorted(starts.items(), key=lambda item: item[1]):
        if offset >= start:
            region = f"the {name} from {start}"
    return region


def assert_same_outputs(python: dict, other: dict, what: str) -> None:
    """Both zonedata files byte-identical; on a mismatch, where it starts."""
    for name in OUTPUTS:
        expected, got = python[name], other[name]
        if expected == got:
            continue
        offset = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b),
                      min(len(expected), len(got)))
        if name.endswith(".c"):
            where = f"line {expected.count(NEWLINE, 0, offset) + 1}"
        else:
            where = _region(offset, python["zonedata.c"].decode())
        pytest.fail(f"{name} differs from offset {offset} ({where}): Python wrote "
                    f"{len(expected)} bytes, {expected[max(0, offset - 16):offset + 16]!r} "
                    f"there; {what} wrote {len(got)} bytes, "
                    f"{got[max(0, offset - 16):offset + 16]!r}")


def _outputs(build: Build) -> dict:
    return {name: build.output(name) for name in OUTPUTS}


@pytest.mark.parametrize("name", ACCEPTED + list(GENERATED))
def test_accepted_set_bakes_to_the_same_bytes(name, tmp_path):
    if name in GENERATED:
        config = GENERATED[name](tmp_path / "zones")
    else:
        config = NATIVE / "accepted" / name / "zonebake.toml"
    python, baked = outputs_in_process(config, tmp_path / "zonedata.bin")
    assert_same_outputs(python, baked, "the baker")


def test_build_bakes_an_accepted_set_as_the_pipeline_builds_it(tmp_path):
    """The command line, end to end: the same files, no word on stderr, in every mode."""
    config = GENERATED["gen-zone-3000"](tmp_path / "zones")
    python, required, default = run_in_parallel("build", config, tmp_path, "0", "require",
                                                 None)
    for build in (python, required, default):
        assert build.returncode == 0, build.stderr
        assert build.stderr == "", build.stderr
        assert sorted(os.listdir(build.outdir)) == sorted(os.listdir(python.outdir))
    assert_same_outputs(_outputs(python), _outputs(required), "ZONEBAKE_NATIVE=require")
    assert_same_outputs(_outputs(python), _outputs(default), "the default")


def test_a_build_over_the_last_one_replaces_every_file(tmp_path):
    """The baker's data goes in place of the last build's (whose pages are freed meanwhile):
    the outputs are the new set's, as a build into an empty directory writes them."""
    first = GENERATED["gen-zone-3000"](tmp_path / "first")
    second = NATIVE / "accepted" / ACCEPTED[0] / "zonebake.toml"
    outdir, fresh = tmp_path / "out", tmp_path / "fresh"
    for config, into in ((first, outdir), (second, outdir), (second, fresh)):
        subprocess.run([sys.executable, "-m", "zonebake", "build", "-c", str(config), "-o",
                        str(into), "-q"], check=True)
    assert sorted(os.listdir(outdir)) == sorted(OUTPUTS + ("zonebake-server",))
    # A sanitizer build (-g) records the directory zonedata.c was compiled in.
    compared = OUTPUTS if os.environ.get("ZONEBAKE_SANITIZE") else OUTPUTS + ("zonebake-server",)
    for name in compared:
        assert (outdir / name).read_bytes() == (fresh / name).read_bytes(), name


@pytest.mark.parametrize("name", sorted(PYTHON_SAYS))
def test_declined_set_is_left_to_python(name, tmp_path):
    directory = NATIVE / "declined" / name
    required, default, python = run_in_parallel("check", directory / "zonebake.toml",
                                                 tmp_path, "require", None, "0")

    # The Python pipeline does what the set is there for.
    exit_status, diagnostic = PYTHON_SAYS[name]
    said = python.diagnostics(str(directory))
    assert python.returncode == exit_status, python.stderr
    if diagnostic is None:
        assert said == [], python.stderr
    else:
        assert any(diagnostic in line for line in said), python.stderr

    # By default, the result is the Python pipeline's.
    assert default.returncode == python.returncode, default.stderr
    assert default.diagnostics(str(directory)) == said, default.stderr

    if name in READ_BY_DNSPYTHON:
        assert required.returncode == python.returncode, required.stderr
        assert required.diagnostics(str(directory)) == said, required.stderr
        assert_same_outputs(*outputs_in_process(directory / "zonebake.toml",
                                                tmp_path / "zonedata.bin"), "the baker")
        return
    # Required, the baker refuses the set and says why.
    assert required.returncode == EXIT_DECLINED, required.stderr
    reasons = [line[len(DECLINED_PREFIX):] for line in required.stderr.splitlines()
               if line.startswith(DECLINED_PREFIX)]
    assert reasons and all(reason.strip() for reason in reasons), required.stderr


def test_every_declined_set_says_what_python_does_with_it():
    assert sorted(PYTHON_SAYS) == _sets("declined")


@pytest.mark.parametrize("name", sorted(DIAGNOSED))
@pytest.mark.parametrize("lenient", [False, True], ids=["strict", "lenient"])
def test_diagnosed_set_is_reported_as_by_python(name, lenient, tmp_path):
    """Errors and warnings come from the baker, with the Python pipeline's words and
    positions, in its order; a set with warnings only is built to the same bytes."""
    directory = NATIVE / "diagnosed" / name
    python, required = run_in_parallel("build", directory / "zonebake.toml", tmp_path, "0",
                                       "require", lenient=lenient)
    exit_status, diagnostic = DIAGNOSED[name]
    if lenient and name in ("missing-glue", "ns-target-cname"):
        exit_status, diagnostic = 0, diagnostic.replace("error:", "warning:")
    said = python.diagnostics(str(directory))
    assert python.returncode == exit_status, python.stderr
    assert any(diagnostic in line for line in said), python.stderr
    assert required.returncode == exit_status, required.stderr
    assert required.diagnostics(str(directory)) == said, required.stderr
    if exit_status == 0:
        assert_same_outputs(_outputs(python), _outputs(required), "the baker")
    else:
        assert not required.outdir.exists(), "a set with errors writes nothing"


def test_every_diagnosed_set_says_what_it_makes_both_say():
    assert sorted(DIAGNOSED) == _sets("diagnosed")


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_files_are_plain(name):
    """The baker's subset is what compiler/fastparse.py reads (and it reads those files as
    dnspython's Reader does): a file it hands to the Reader would not test the baker."""
    for source in load_toml(NATIVE / "accepted" / name / "zonebake.toml").zones:
        quick = parse_plain(source, lambda: None)
        assert quick is not None, f"{source.display} is not plain"
        by_reader = [(r.name.labels, r.ttl, r.rdata, r.position.line)
                     for r in parse_zone(source, plain=False).records]
        assert [(n.labels, ttl, rdata, line) for n, ttl, rdata, line in quick] == by_reader, \
            source.display


# The fields of the baker's types that hold names (NS, CNAME, PTR, SRV; MX; SOA).
NAME_FIELDS = ("target", "exchange", "mname", "rname")


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_sets_spell_each_name_one_way(name):
    """The baker serves a name in the first spelling the set gives it, where the pipeline
    keeps each record's: an accepted set, compared byte for byte, must spell each name, and
    each common suffix, one way (tests/zones/native/spelled/ has sets that do not)."""
    spellings: dict[tuple[bytes, ...], set[tuple[bytes, ...]]] = {}

    def note(spelled: dns.name.Name) -> None:
        for i in range(len(spelled.labels)):
            suffix = spelled.labels[i:]
            spellings.setdefault(tuple(label.lower() for label in suffix), set()).add(suffix)

    for source in load_toml(NATIVE / "accepted" / name / "zonebake.toml").zones:
        note(source.origin)
        for record in parse_zone(source).records:
            note(record.name)
            for field in NAME_FIELDS:
                value = getattr(record.rdata, field, None)
                if isinstance(value, dns.name.Name):
                    note(value)
    assert {k: v for k, v in spellings.items() if len(v) > 1} == {}


SPELLED = _sets("spelled")


@pytest.mark.parametrize("name", SPELLED)
def test_a_name_spelled_two_ways_is_served_in_its_first_spelling(name, tmp_path):
    """The same answers as the pipeline's, names compared without regard to case (RFC 4343
    §3), and every name of the baker's answers in one spelling: the first in the set."""
    config = load_toml(NATIVE / "spelled" / name / "zonebake.toml")
    compiled = compile_zoneset(config)
    baked = native.bake(config, tmp_path / "zonedata.bin")
    python = served(compiled.layout.data, compiled.layout.nodes_off, compiled.layout.types_off,
                    compiled.layout.nnodes)
    ours = served((tmp_path / "zonedata.bin").read_bytes(), baked.layout.nodes_off,
                  baked.layout.types_off, baked.layout.nnodes)
    assert ours == python
    first: dict[dns.name.Name, tuple[bytes, ...]] = {}
    for source in config.zones:
        for record in parse_zone(source, plain=False).records:
            for spelled in (record.name, *(getattr(record.rdata, f, None) for f in NAME_FIELDS)):
                if isinstance(spelled, dns.name.Name):
                    first.setdefault(spelled, spelled.labels)
    for answers in ours.values():
        for message in answers.values():
            for rrset in getattr(message, "answer", []) + getattr(message, "additional", []):
                names = [rrset.name] + [rd.target for rd in rrset if hasattr(rd, "target")]
                for spelled in names:
                    if spelled in first and spelled != message.question[0].name:
                        assert spelled.labels == first[spelled], (name, spelled)


def test_a_failing_baker_leaves_the_build_to_the_pipeline(tmp_path):
    """A baker that cannot be compiled (or crashes) is a bug of ours, not the user's: the
    build warns and goes on with the Python pipeline; `require` makes it an error."""
    cc = tmp_path / "cc-without-baker"
    cc.write_text('#!/bin/sh\ncase "$*" in *bake/main.c*) echo "no baker here" >&2; exit 1;; '
                  'esac\nexec cc "$@"\n')
    cc.chmod(0o755)
    config = GENERATED["gen-zoneset-30"](tmp_path / "zones")
    env = {**os.environ, "CC": str(cc), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    results = {}
    for mode in ("auto", "require"):
        env["ZONEBAKE_NATIVE"] = mode
        results[mode] = subprocess.run(
            [sys.executable, "-m", "zonebake", "build", "-q", "-c", str(config), "-o",
             str(tmp_path / mode)], env=env, capture_output=True, text=True)
    auto, required = results["auto"], results["require"]
    assert auto.returncode == 0, auto.stderr
    assert "warning: the C compiler failed" in auto.stderr
    assert "no baker here" in auto.stderr
    assert "compiling with the Python pipeline instead" in auto.stderr
    assert (tmp_path / "auto" / "zonebake-server").is_file()
    assert required.returncode == EXIT_DECLINED, required.stderr
    assert "the C compiler failed" in required.stderr


def test_a_baker_failing_as_it_writes_leaves_the_last_build_as_it_was(tmp_path):
    """The server is compiled and linked while the baker writes the data, in a directory of
    its own: when the baker fails then (here it may not write more than 256 KiB), that is
    abandoned, and the output directory keeps the last build's files, unchanged."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "ZONEBAKE_NATIVE": "require"}
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
    assert result.returncode == EXIT_DECLINED, result.stderr
    assert "the native baker failed" in result.stderr
    assert {name: (outdir / name).read_bytes() for name in os.listdir(outdir)} == before


PLAIN_ZONE = ("$ORIGIN example.test.\n$TTL 300\n@ SOA ns hostmaster 1 7200 900 1209600 300\n"
              "@ NS ns\nns A 192.0.2.1\n")


@pytest.mark.parametrize("octet, reason", [(b"\0", "octets outside ASCII"),
                                           (b"\xc3", "octets outside ASCII"),
                                           (b"\r", "a carriage return alone")])
def test_octets_the_reader_leaves_to_python_are_found_at_every_offset(octet, reason,
                                                                      tmp_path):
    """The reader scans the file eight octets at a time: an odd octet must be found wherever
    it falls in a word, and in the tail that is not a whole word."""
    zone = tmp_path / "example.test.zone"
    config = load_toml_text(tmp_path, zone)
    for padding in range(17):
        zone.write_bytes(PLAIN_ZONE.encode() + b";" + b"x" * padding + octet + b"x\n")
        with pytest.raises(native.Declined, match=reason):
            native.bake(config, tmp_path / "zonedata.bin", hand_over=False)
        zone.write_bytes(PLAIN_ZONE.encode() + b";" + b"x" * padding + octet)
        with pytest.raises(native.Declined, match=reason):
            native.bake(config, tmp_path / "zonedata.bin", hand_over=False)
    zone.write_bytes(PLAIN_ZONE.encode() + b"; \r\n")  # CR LF is a line end
    native.bake(config, tmp_path / "zonedata.bin")
    assert (tmp_path / "zonedata.bin").stat().st_size > 0


def load_toml_text(directory: Path, zone: Path):
    toml = directory / "zonebake.toml"
    toml.write_text(f'[[zone]]\norigin = "example.test."\nfile = "{zone.name}"\n')
    return load_toml(toml)
