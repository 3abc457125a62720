"""Defaults where the peers have them (issue 18): a listen address without a port is port 53;
`user`, `control`, `metrics` and `threads` in zonebake.toml's [server] table are the server's
when its command line gives none; `zonebake build` and `check` read
/etc/zonebake/zonebake.toml when given neither -c nor --zone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import AS_ROOT, Server, build_set, proc_fields, run_zonebake
from zonebake.cli import DEFAULT_CONFIG
from zonebake.commands.deploy import control_status

ZONE = "@ 300 SOA ns h 1 2 3 4 5\n@ NS ns\nns A 192.0.2.1\n"


def built(tmp_path: Path, server: str) -> Path:
    (tmp_path / "z.zone").write_text(ZONE)
    toml = tmp_path / "zonebake.toml"
    toml.write_text(f'[server]\n{server}\n[[zone]]\norigin = "example."\nfile = "z.zone"\n')
    return build_set(tmp_path / "out", "-c", str(toml))


def test_server_table_gives_control_metrics_threads_and_user(tmp_path):
    control = tmp_path / "control"
    binary = built(tmp_path, f'listen = ["127.0.0.1:0"]\ncontrol = "{control}"\nthreads = 3\n'
                             f'metrics = "127.0.0.1:0"\n'
                             + ('user = "nobody"\n' if os.geteuid() == 0 else ""))
    server = Server(binary, listen=())  # no option: the compiled-in defaults
    try:
        assert "statistics on http://127.0.0.1:" in server._read_line(timeout=5)
        status = control_status(control)
        assert (status["pid"], status["workers"]) == (server.process.pid, 3)
        if os.geteuid() == 0:
            nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True,
                                        check=True).stdout)
            assert proc_fields(server.process.pid, "status", "Uid:")[:3] == [str(nobody)] * 3
    finally:
        server.stop()


def test_options_override_the_server_table(tmp_path):
    binary = built(tmp_path, 'listen = ["127.0.0.1:0"]\nthreads = 3\n')
    server = Server(binary, "--threads", "1")
    try:
        assert len(os.listdir(f"/proc/{server.process.pid}/task")) == 1
    finally:
        server.stop()


def test_an_address_without_a_port_is_port_53(tmp_path):
    binary = built(tmp_path, 'listen = ["127.0.0.1", "[::1]", "[2001:db8::1]"]\n')
    shown = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=10)
    assert "(default: 127.0.0.1:53 [::1]:53 [2001:db8::1]:53)" in shown.stdout
    if os.geteuid() != 0:
        pytest.skip("binding port 53 needs root")
    # The server's own --listen too (127.0.0.0/8 is all loopback: an address nothing uses).
    server = Server(binary, listen=("127.0.0.77",))
    try:
        assert server.address == ("127.0.0.77", 53)
        assert server.query("example.", "SOA").answer
    finally:
        server.stop()


def test_build_reads_etc_zonebake_without_c_or_zone(tmp_path):
    if DEFAULT_CONFIG.exists():
        pytest.skip(f"{DEFAULT_CONFIG} exists here: the test would read it")
    result = run_zonebake("check")
    assert result.returncode == 2
    assert result.stderr == (f"zonebake: no zones: give -c TOML or --zone ORIGIN=FILE "
                             f"({DEFAULT_CONFIG}, read when neither is given, does not exist)\n")
