"""Defaults where the peers have them (issue 18): a listen address without a port is port 53;
`user`, `control`, `metrics`, `threads`, `xdp` and `xdp-optional` in zonebake.toml's [server]
table are the server's when its command line gives none; `zonebake build` and `check` read
/etc/zonebake/zonebake.toml when given neither -c nor --zone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import dns.message
import dns.query

from conftest import (AS_ROOT, LISTENING, LOG_LINE, Server, build_set, proc_fields, run_zonebake,
                      stop_process)
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


def test_the_server_table_gives_xdp_and_its_options_replace_them(tmp_path):
    """xdp and xdp-optional are the server's --xdp and --xdp-optional when its command line
    gives none: here an interface that does not exist, so the start says which, and with
    xdp-optional serves on its sockets alone."""
    binary = built(tmp_path, 'listen = ["127.0.0.1:0"]\nxdp = ["zbnosuch0@5300", "zbnosuch1"]\n')
    shown = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=10)
    assert "(default: zbnosuch0@5300 zbnosuch1)" in shown.stdout
    assert "the sockets alone (default: off)" in shown.stdout
    failed = subprocess.run([str(binary), *AS_ROOT], capture_output=True, text=True, timeout=10)
    assert failed.returncode == 1
    assert failed.stderr.endswith("error: zbnosuch0: no such interface: No such device\n"), \
        failed.stderr
    # The command line's --xdp replaces the table's list.
    failed = subprocess.run([str(binary), "--xdp", "zbnosuch2", *AS_ROOT], capture_output=True,
                            text=True, timeout=10)
    assert failed.returncode == 1 and "error: zbnosuch2: no such interface" in failed.stderr
    (tmp_path / "optional").mkdir()
    optional = built(tmp_path / "optional", 'listen = ["127.0.0.1:0"]\nxdp = "zbnosuch0"\n'
                                            "xdp-optional = true\n")
    shown = subprocess.run([str(optional), "--help"], capture_output=True, text=True, timeout=10)
    assert "the sockets alone (default: on)" in shown.stdout
    # Optional (the table's, or --xdp-optional): said first, then the sockets serve.
    for server_binary, options in [(optional, []), (binary, ["--xdp-optional"])]:
        server = subprocess.Popen([str(server_binary), *options, *AS_ROOT],
                                  stderr=subprocess.PIPE, text=True)
        try:
            warned = LOG_LINE.match(server.stderr.readline())
            assert warned and warned.group(2) == (
                "warning: not answering over AF_XDP: zbnosuch0: no such interface: No such "
                "device; the sockets serve alone (--xdp-optional)"), warned
            serving = LISTENING.match(LOG_LINE.match(server.stderr.readline()).group(2))
            answer = dns.query.udp(dns.message.make_query("example.", "SOA"), "127.0.0.1",
                                   port=int(serving.group(2)), timeout=2)
            assert answer.rcode() == 0 and answer.answer
        finally:
            stop_process(server)


@pytest.mark.parametrize("spec,message", [
    ("", "--xdp : an interface's name has 1 to 15 characters"),
    ("@53", "--xdp @53: an interface's name has 1 to 15 characters"),
    ("a-name-of-16-chars",
     "--xdp a-name-of-16-chars: an interface's name has 1 to 15 characters"),
    ("eth0@", "--xdp eth0@: the port after @ is 1 to 65535"),
    ("eth0@0", "--xdp eth0@0: the port after @ is 1 to 65535"),
    ("eth0@65536", "--xdp eth0@65536: the port after @ is 1 to 65535"),
    ("eth0@53x", "--xdp eth0@53x: the port after @ is 1 to 65535"),
])
def test_a_bad_xdp_option_is_a_usage_error(testset_binary, spec, message):
    result = subprocess.run([str(testset_binary), "--xdp", spec, *AS_ROOT], capture_output=True,
                            text=True, timeout=10)
    assert (result.returncode, result.stderr) == (2, f"zonebake-server: {message}\n")
