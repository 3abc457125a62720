"""Who makes way at the TCP connection caps (issue: the least recently active connection was
closed, answers queued included, so a client opening connections fast evicted every honest
one), and what a connection costs while it does nothing (its buffers go back to a pool)."""

from __future__ import annotations

import socket
import time

import pytest

from conftest import Server, proc_fields
from test_tcp import LONG, closed_by_server, frame, query, recv_message


def connect_from(server, source: str) -> socket.socket:
    """A connection from another loopback address: a client of its own."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(LONG)
    sock.bind((source, 0))
    sock.connect(server.address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def asks(sock: socket.socket, id_: int) -> bool:
    sock.sendall(frame(query("www.example.", id_=id_)))
    sock.settimeout(LONG)
    return recv_message(sock).id == id_


@pytest.fixture()
def one_worker():
    servers = []

    def start(binary, *args):
        servers.append(Server(binary, "--threads", "1", "--tcp-idle-timeout", "60", *args))
        return servers[-1]
    yield start
    for server in servers:
        alive = server.alive()
        server.stop()
        assert alive


def test_a_connection_in_the_middle_of_a_query_outlasts_idle_ones(one_worker, testset_binary):
    server = one_worker(testset_binary, "--tcp-max-connections", "3")
    busy = connect_from(server, "127.0.0.1")
    message = frame(query("www.example.", id_=7))
    busy.sendall(message[:5])  # the rest is still on its way: the server holds a part
    time.sleep(1.2)  # now it is the least recently active one, by a whole tick
    idle = [connect_from(server, "127.0.0.1") for _ in range(2)]
    try:
        with connect_from(server, "127.0.0.1") as newcomer:
            assert asks(newcomer, 3)
        assert closed_by_server(idle[0], 1.0)
        busy.sendall(message[5:])
        assert recv_message(busy).id == 7
        assert not closed_by_server(idle[1], 0.2)
    finally:
        for sock in [busy, *idle]:
            sock.close()


def test_one_address_cannot_push_the_others_out(one_worker, testset_binary):
    server = one_worker(testset_binary, "--tcp-max-connections", "8",
                        "--tcp-max-connections-per-source", "2")
    honest = [connect_from(server, "127.0.0.1") for _ in range(2)]
    flood = []
    try:
        assert asks(honest[0], 1)
        for _ in range(20):
            flood.append(connect_from(server, "127.0.0.2"))
        assert asks(flood[-1], 2)
        # The flooding address kept its latest two; its first ones went, the others' stayed.
        assert closed_by_server(flood[0], 1.0)
        assert all(asks(sock, 10 + i) for i, sock in enumerate(honest))
    finally:
        for sock in honest + flood:
            sock.close()


def resident_kib(pid: int) -> int:
    return int(proc_fields(pid, "status", "VmRSS:")[0])


def test_connections_between_queries_hold_no_buffers(one_worker, testset_binary):
    """Each connection asks once and stays open: with buffers of its own each one would keep
    the pages it touched (1,632 KiB for these 400 before the pool); from the pool they are the same few."""
    server = one_worker(testset_binary, "--tcp-max-connections", "400",
                        "--tcp-max-connections-per-source", "400")
    held = [connect_from(server, "127.0.0.1")]
    try:
        assert asks(held[0], 0)
        before = resident_kib(server.process.pid)
        for i in range(1, 400):
            held.append(connect_from(server, "127.0.0.1"))
            assert asks(held[-1], i % 65536)
        grown = resident_kib(server.process.pid) - before
        assert grown < 512, f"{grown} KiB more resident for 400 connections"
        assert all(not closed_by_server(sock, 0.01) for sock in held[:3])
    finally:
        for sock in held:
            sock.close()
