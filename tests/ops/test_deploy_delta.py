"""`zonebake delta` and `zonebake deploy --patch`: a build shipped as a binary delta against
the running server's own binary, swapped in only when the patched server's SHA-256 is the
build's, and never left half written."""

from __future__ import annotations

import hashlib

import pytest

from conftest import AS_ROOT, build_set, require, run_zonebake
from swapping import SWAP_ZONE, ControlledServer, answer_octet, build_swap_set, wait_gone

OLD_OCTET, NEW_OCTET = 1, 2


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("deltasets")
    return build_swap_set(root / "old", OLD_OCTET), build_swap_set(root / "new", NEW_OCTET)


@pytest.fixture(scope="module")
def patch(sets, tmp_path_factory):
    """The delta from the old build's server to the new one's, and the new one's SHA-256."""
    require("zstd", "zstd")
    path = tmp_path_factory.mktemp("delta") / "server.zst"
    result = run_zonebake("delta", str(sets[0] / "zonebake-server"),
                          str(sets[1] / "zonebake-server"), "-o", str(path))
    assert result.returncode == 0, result.stderr
    new = (sets[1] / "zonebake-server").read_bytes()
    assert result.stdout == f"sha256 {hashlib.sha256(new).hexdigest()}\n"
    assert 0 < path.stat().st_size < len(new) // 100
    return path, hashlib.sha256(new).hexdigest()


@pytest.fixture
def server(sets, tmp_path):
    control, log = tmp_path / "control", tmp_path / "server.log"
    running = ControlledServer(sets[0], control, log)
    yield running
    running.stop_all()


def deploy_patch(server, outdir, *args):
    return run_zonebake("deploy", str(outdir), "--control", str(server.control), "--log",
                        str(server.log), *args, "--", *AS_ROOT)


def test_a_delta_deploys_the_build_it_was_made_for(sets, patch, server, tmp_path):
    path, digest = patch
    outdir = tmp_path / "shipped"
    result = deploy_patch(server, outdir, "--patch", str(path), "--sha256", digest)
    assert result.returncode == 0, result.stderr
    assert f"serves in place of pid {server.process.pid}" in result.stderr
    assert wait_gone(server.process.pid)
    assert answer_octet(server.port) == NEW_OCTET
    assert (outdir / "zonebake-server").read_bytes() == \
        (sets[1] / "zonebake-server").read_bytes()
    assert sorted(p.name for p in outdir.iterdir()) == ["zonebake-server"]


@pytest.mark.parametrize("how", ["wrong hash", "other base"])
def test_a_delta_for_another_build_is_not_deployed(sets, patch, server, tmp_path, how):
    path, digest = patch
    if how == "other base":  # made against a third build, applied to the old one
        third = tmp_path / "third"
        third.mkdir()
        zone = third / "swap.test.zone"
        zone.write_text(SWAP_ZONE.format(octet=OLD_OCTET) +
                        "".join(f"h{i} IN TXT \"{i}\"\n" for i in range(300)))
        build_set(third, "--zone", f"swap.test.={zone}")
        path = tmp_path / "other.zst"
        made = run_zonebake("delta", str(third / "zonebake-server"),
                            str(sets[1] / "zonebake-server"), "-o", str(path))
        assert made.stdout == f"sha256 {digest}\n"
    else:
        digest = "0" * 64
    outdir = tmp_path / "shipped"
    result = deploy_patch(server, outdir, "--patch", str(path), "--sha256", digest)
    assert result.returncode == 1, result.stderr
    assert f"not deployed, pid {server.process.pid} still serves" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(outdir.iterdir()) == []  # nothing half written
    assert server.serving_pid() == server.process.pid
    assert answer_octet(server.port) == OLD_OCTET


def test_a_plain_deploy_checks_the_hash_it_is_given(sets, server):
    result = deploy_patch(server, sets[1], "--sha256", "ab" * 32)
    assert result.returncode == 1
    assert f"{sets[1] / 'zonebake-server'}'s SHA-256 is " in result.stderr
    assert answer_octet(server.port) == OLD_OCTET


def test_a_patch_needs_its_hash(patch, server, tmp_path):
    result = deploy_patch(server, tmp_path / "shipped", "--patch", str(patch[0]))
    assert result.returncode == 2
    assert "--patch needs --sha256" in result.stderr


@pytest.mark.parametrize("output,message", [
    ("/nonexistent/server.zst", "/nonexistent/server.zst: no such directory to write it in"),
    # zstd prints advice at level 19 before its error, and here a stack after it: only the
    # error is said.
    ("/proc/server.zst", "cannot make /proc/server.zst: zstd says: zstd: /proc/server.zst: "
                         "No such file or directory"),
])
def test_a_delta_that_cannot_be_written_says_why(sets, output, message):
    require("zstd", "zstd")
    result = run_zonebake("delta", str(sets[0] / "zonebake-server"),
                          str(sets[1] / "zonebake-server"), "-o", output)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"zonebake: {message}\n")
