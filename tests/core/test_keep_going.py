"""`zonebake build --keep-going` (issue 18): a set with a broken zone is built without it, or
with its last good copy from an earlier --keep-going build into the same output directory
(with a warning); the errors are reported all the same and the exit status is 3."""

from __future__ import annotations

from pathlib import Path

import dns.rcode

from conftest import Server, run_zonebake


def zone_set(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    toml = ['[server]', 'listen = ["127.0.0.1:0"]']
    for i in (1, 2, 3):
        (directory / f"z{i}.zone").write_text(
            f"$TTL 300\n@ SOA ns h {i} 2 3 4 5\n@ NS ns\nns A 192.0.2.{i}\n")
        toml += ["[[zone]]", f'origin = "z{i}.test."', f'file = "z{i}.zone"']
    (directory / "zonebake.toml").write_text("\n".join(toml) + "\n")
    return directory / "zonebake.toml"


def build(toml: Path, outdir: Path):
    return run_zonebake("build", "-q", "-c", str(toml), "-o", str(outdir), "--keep-going")


def address(server: Server, zone: str) -> str | int:
    """z<N>.test.'s ns address as served, or the rcode when there is none."""
    answer = server.query(f"ns.{zone}", "A")
    return answer.answer[0][0].address if answer.answer else answer.rcode()


def test_a_broken_zone_is_served_from_its_last_good_copy_or_left_out(tmp_path):
    toml = zone_set(tmp_path / "set")
    first = build(toml, tmp_path / "out")
    assert (first.returncode, first.stderr) == (0, "")
    assert len(list((tmp_path / "out" / "last-good").glob("*.records"))) == 3

    z2 = tmp_path / "set" / "z2.zone"
    z2.write_text(z2.read_text().replace("ns A 192.0.2.2", "ns A 192.0.2.22\nns CNAME z1.test."))
    (tmp_path / "set" / "z3.zone").write_text("$TTL 300\n@ SOA ns h 3 2 3 4 5\n@ NS ns\n")
    for outdir in ("out", "fresh"):  # with the last good copies, and without any
        result = build(toml, tmp_path / outdir)
        assert result.returncode == 3, result.stderr
        lines = result.stderr.splitlines()
        assert lines[0] == (f"{z2}:4: error: ns.z2.test. has a CNAME and A data (RFC 2181 "
                            f"§10.1; CNAME at line 5)")
        if outdir == "out":
            assert lines[1].startswith(f"{z2}: warning: z2.test. has errors: its last good "
                                       f"copy, kept by the build of ")
            assert lines[1].endswith(" UTC, is compiled instead")
        else:
            assert lines[1] == f"{z2}: warning: z2.test. has errors and no last good copy: " \
                               f"left out of the set"
        z3 = tmp_path / "set" / "z3.zone"
        assert lines[2] == (f"{z3}:3: error: z3.test. NS ns.z3.test.: no A or AAAA record for "
                            f"it in the zone (glue missing)")
        assert lines[-1] == ("zonebake: 2 zone(s) with errors, left out or compiled from their "
                             "last good copy; the rest built")
        server = Server(tmp_path / outdir / "zonebake-server")
        try:
            served = [address(server, f"z{i}.test.") for i in (1, 2, 3)]
        finally:
            server.stop()
        if outdir == "out":
            assert served == ["192.0.2.1", "192.0.2.2", "192.0.2.3"]
        else:
            assert served == ["192.0.2.1", dns.rcode.REFUSED, dns.rcode.REFUSED]


def test_nothing_left_is_an_error(tmp_path):
    toml = zone_set(tmp_path / "set")
    for i in (1, 2, 3):
        (tmp_path / "set" / f"z{i}.zone").write_text("@ 300 NS ns.example.\n")
    result = build(toml, tmp_path / "out")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == "zonebake: 3 error(s); nothing written"
    assert not (tmp_path / "out" / "zonebake-server").exists()
