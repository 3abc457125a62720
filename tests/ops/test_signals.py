"""SIGTERM and SIGINT stop the server: it stops reading, finishes what it has in hand, says
so on stderr and exits 0."""

from __future__ import annotations

import signal

import dns.rcode
import pytest

from conftest import LOG_LINE, Server


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_server_cleanly(testset_binary, sig):
    server = Server(testset_binary, "--threads", "2")
    try:
        assert server.query("www.example.", "A").rcode() == dns.rcode.NOERROR
        server.process.send_signal(sig)
        assert server.process.wait(timeout=5) == 0
        assert LOG_LINE.match(server._read_line(timeout=2)).groups() == (
            str(server.process.pid), "stopped")
    finally:
        server.stop()
