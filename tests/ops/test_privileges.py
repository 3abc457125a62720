"""Privileges: --user NAME or UID:GID and --chroot take effect after binding; the server
refuses to go on as root without --allow-root; a swap works across the drop."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import Server, run_zonebake
from swapping import (ControlledServer, answer_octet, build_swap_set, deploy, gone, log_lines,
                      stop_pid, wait_gone)

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="switching users takes root (CI runs "
                                                          "as root)")
NOBODY = 65534


def status_ids(pid: int) -> dict[str, list[int]]:
    """Uid, Gid and Groups of a process, from /proc."""
    ids = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, values = line.partition(":")
        if key in ("Uid", "Gid", "Groups"):
            ids[key] = [int(v) for v in values.split()]
    return ids


def start(binary, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "--listen", "127.0.0.1:0", *args], capture_output=True,
                          text=True, timeout=10)


@pytest.mark.parametrize("user", ["12:", ":5", "a:1", "1:2:3", "4294967295:0", "1:-1",
                                  "99999999999:1"])
def test_bad_numeric_user_is_refused(testset_binary, user):
    result = start(testset_binary, "--user", user)
    assert result.returncode == 2
    assert f"--user {user}: UID:GID takes two numbers below 4294967295" in result.stderr


def test_unknown_user_is_refused(testset_binary):
    result = start(testset_binary, "--user", "no-such-user-here")
    assert result.returncode == 2
    assert "--user no-such-user-here: no such user in /etc/passwd" in result.stderr


@pytest.mark.parametrize("user", ["root", "0:0"])
def test_becoming_root_takes_allow_root(testset_binary, user):
    result = start(testset_binary, "--user", user)
    assert result.returncode == 2
    assert "refusing to serve as root: give --user NAME (or UID:GID), or --allow-root" in \
        result.stderr


@root_only
def test_root_is_refused_without_a_user(testset_binary):
    result = start(testset_binary)
    assert result.returncode == 2
    assert "refusing to serve as root" in result.stderr


@root_only
@pytest.mark.parametrize("user", ["nobody", f"{NOBODY}:{NOBODY}"])
def test_user_is_dropped_to_after_binding(testset_binary, user):
    server = Server(testset_binary, "--user", user, "--threads", "2")
    try:
        assert status_ids(server.process.pid) == {"Uid": [NOBODY] * 4, "Gid": [NOBODY] * 4,
                                                  "Groups": [NOBODY]}
        assert server.query("www.example.").answer
    finally:
        server.stop()


@root_only
def test_chroot_after_binding(testset_binary, tmp_path):
    jail = tmp_path / "jail"
    jail.mkdir()
    server = Server(testset_binary, "--user", f"{NOBODY}:{NOBODY}", "--chroot", str(jail))
    try:
        assert os.readlink(f"/proc/{server.process.pid}/root") == str(jail)
        assert server.query("www.example.").answer
    finally:
        server.stop()


@root_only
def test_swap_across_the_privilege_drop(tmp_path):
    """The control socket is made by root before the drop, owned by the user; the new
    process connects as root (before its own drop) and renames its socket over PATH as that
    user, through the directory it opened before: the directory must be the user's."""
    old_set = build_swap_set(tmp_path / "old", 1)
    new_set = build_swap_set(tmp_path / "new", 2)
    run = tmp_path / "run"
    run.mkdir()
    os.chown(run, NOBODY, NOBODY)
    control, log = run / "control", tmp_path / "server.log"
    server = ControlledServer(old_set, control, log, "--user", "nobody")
    try:
        stat = control.stat()
        assert (stat.st_uid, stat.st_gid, stat.st_mode & 0o777) == (NOBODY, NOBODY, 0o600)
        result = deploy(new_set, control, log, "--user", "nobody")
        assert result.returncode == 0, result.stderr
        assert server.process.wait(timeout=10) == 0
        new = server.serving_pid()
        assert status_ids(new)["Uid"] == [NOBODY] * 4
        assert answer_octet(server.port) == 2
        assert control.stat().st_uid == NOBODY
    finally:
        server.stop_all()
    assert wait_gone(new) and gone(server.process.pid)
    assert not control.exists()  # removed by the last server, as the user


@root_only
def test_control_directory_the_user_cannot_write(tmp_path):
    """The new server takes over but cannot rename its control socket into a directory its
    user may not write: it serves alone (the old one has stopped), says why, and deploy fails
    without stopping it."""
    old_set = build_swap_set(tmp_path / "old", 1)
    new_set = build_swap_set(tmp_path / "new", 2)
    control, log = tmp_path / "control", tmp_path / "server.log"  # tmp_path is root's
    server = ControlledServer(old_set, control, log, "--user", "nobody")
    new = None
    try:
        result = run_zonebake("deploy", str(new_set), "--control", str(control), "--log",
                              str(log), "--timeout", "3", "--", "--user", "nobody")
        assert result.returncode == 1
        match = re.search(r"pid (\d+) has stopped and the new server \(pid (\d+)\) serves, "
                          r"but not on the control socket", result.stderr)
        assert match and int(match.group(1)) == server.process.pid, result.stderr
        new = int(match.group(2))
        assert f"warning: cannot put the control socket at control: Permission denied (it " \
               f"stays at control.{new})" in log_lines(log, new)
        assert answer_octet(server.port) == 2
    finally:
        if new:
            stop_pid(new)
        server.stop_all()


@root_only
def test_a_control_socket_swapped_for_a_link_is_not_followed(testset_binary, tmp_path):
    """The service user may write the control socket's directory: between the bind and the
    change of owner it can put a symbolic link to a file of root's where the socket was.
    strace holds the server 0.4 s after every bind while this test swaps the link in (every
    bind, not the third: with port 0 the listeners' binds are retried when TCP finds the port
    UDP got taken, so the control socket's bind has no fixed place); the file must keep its
    owner, and the server refuse. The server runs in a session of its own: killing strace
    alone would leave it serving, detached, and holding the pipe open."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (Debian: strace)")
    victim = tmp_path / "victim"
    victim.write_text("root's\n")
    os.chmod(victim, 0o600)
    control = tmp_path / "control"
    process = subprocess.Popen(
        ["strace", "-qq", "-f", "-o", "/dev/null", "-e", "trace=bind",
         "-e", "inject=bind:delay_exit=400000", str(testset_binary), "--listen",
         "127.0.0.1:0", "--threads", "1", "--control", str(control), "--user", "nobody"],
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not (made := list(tmp_path.glob("control.*"))) and time.monotonic() < deadline:
            time.sleep(0.005)
        assert made, "the server made no control socket"
        made[0].unlink()
        made[0].symlink_to(victim)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass  # serving: the owner tells what it did
        assert victim.stat().st_uid == 0 and victim.stat().st_gid == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 1
    assert "was replaced by something else while the server made it" in stderr
