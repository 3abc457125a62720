"""A worker out of file descriptors: the pending connections wait in the listen queue, the
listener stays readable, and accepting again at once would spin the worker (issue: 2.98 s of
CPU in 3 s). It must rest until its next tick, and serve new clients once descriptors are
free again."""

from __future__ import annotations

import errno
import os
import resource
import socket
import time

import dns.message
import dns.rcode

from conftest import Server, proc_fields
from test_tcp import LONG, connect, frame, recv_message

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def open_connections(address, count: int) -> list[socket.socket]:
    """`count` connections the kernel completes for the listen queue, whether the server
    accepts them or not."""
    held = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        assert s.connect_ex(address) in (0, errno.EINPROGRESS)
        held.append(s)
    return held


def test_out_of_descriptors_the_worker_rests_then_serves(testset_binary):
    server = Server(testset_binary, "--threads", "1", "--tcp-max-connections", "128",
                    preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
    held = []
    try:
        held = open_connections(server.address, 100)
        time.sleep(0.5)
        before = cpu_seconds(server.process.pid)
        time.sleep(2)
        spent = cpu_seconds(server.process.pid) - before
        assert spent < 0.3, f"the worker spun: {spent:.2f} s of CPU in 2 s"
        for s in held:
            s.close()
        held = []
        deadline = time.monotonic() + LONG
        sock = connect(server)  # queued until the worker takes connections again
        sock.sendall(frame(dns.message.make_query("www.example.", "A").to_wire()))
        response = recv_message(sock)
        sock.close()
        assert response.rcode() == dns.rcode.NOERROR and len(response.answer) == 1
        assert time.monotonic() < deadline
        assert server.alive()
    finally:
        for s in held:
            s.close()
        server.stop()


def soft_nofile(pid: int) -> int:
    return int(proc_fields(pid, "limits", "Max open files")[0])


def test_the_soft_limit_is_raised_to_what_the_connections_need(testset_binary):
    """2 workers of 300 connections: 2 × (300 + 4) + 4 sockets + 64 spare = 676."""
    server = Server(testset_binary, "--threads", "2", "--tcp-max-connections", "300",
                    preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 4096)))
    try:
        assert soft_nofile(server.process.pid) == 676
    finally:
        server.stop()
