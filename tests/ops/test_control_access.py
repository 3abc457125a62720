"""Who may use the control socket, and for how long: only root and the server's own user
(SO_PEERCRED, whatever the socket file's mode), and a whole conversation within 20 s, so that
a client trickling a byte now and then cannot hold the socket, and every swap, for ever."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest

from swapping import ControlledServer, build_swap_set

NOBODY = 65534


@pytest.fixture
def controlled(tmp_path):
    """The control socket in a directory any user may enter (pytest's are root's alone)."""
    outdir = build_swap_set(tmp_path / "set", 1)
    directory = Path(tempfile.mkdtemp(prefix="zonebake-control-"))
    directory.chmod(0o755)
    server = ControlledServer(outdir, directory / "control", tmp_path / "server.log",
                              threads=1)
    yield server
    server.stop_all()
    shutil.rmtree(directory, ignore_errors=True)


def greet_as(uid: int, path: str) -> bytes:
    """The reply to the greeting from a child process running as `uid`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery from here on
        try:
            os.close(read_end)
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(path)
                s.sendall(b"zonebake-control 1\n")
                os.write(write_end, s.recv(200))
        finally:
            os._exit(0)
    os.close(write_end)
    reply = b""
    while chunk := os.read(read_end, 200):
        reply += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    return reply


@pytest.mark.skipif(os.geteuid() != 0, reason="running a client as another user takes root")
def test_another_user_is_refused_even_when_the_mode_lets_it_connect(controlled):
    os.chmod(controlled.control, 0o666)  # a mistake of the operator's
    assert greet_as(NOBODY, str(controlled.control)) == b"error permission denied\n"
    assert greet_as(os.geteuid(), str(controlled.control)) == b"ok zonebake-control 1\n"


def test_a_trickling_client_is_cut_off_and_the_next_one_served(controlled):
    started = time.monotonic()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as slow:
        slow.connect(str(controlled.control))
        slow.sendall(b"zonebake-control 1\n")
        assert slow.recv(100) == b"ok zonebake-control 1\n"
        slow.settimeout(0.1)
        closed = False
        while not closed and time.monotonic() - started < 30:  # bounded
            try:
                slow.sendall(b"s")  # never a whole line, a byte every 2 s
            except (BrokenPipeError, ConnectionResetError):
                closed = True  # cut off between our last look and this byte
                break
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                try:
                    if slow.recv(100) == b"":
                        closed = True
                        break
                except socket.timeout:
                    pass
                except ConnectionResetError:
                    closed = True
                    break
    took = time.monotonic() - started
    assert closed, "the trickling client still holds the control socket after 30 s"
    assert 19 <= took <= 24, took
    assert controlled.serving_pid() == controlled.process.pid
