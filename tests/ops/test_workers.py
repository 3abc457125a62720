"""Several workers (threads with their own SO_REUSEPORT sockets), CPU affinity, batching, and
answers that leave from the address their query came to on a wildcard listener."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

import dns.message
import dns.rcode

from conftest import Server


def threads_of(server) -> list[Path]:
    return sorted(Path(f"/proc/{server.process.pid}/task").iterdir())


def test_each_worker_is_a_thread_and_all_answer(testset_binary):
    server = Server(testset_binary, "--threads", "3", "--batch", "8")
    try:
        assert len(threads_of(server)) == 3
        answered = 0
        for i in range(200):  # 200 source ports: SO_REUSEPORT spreads them over the workers
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(2)
                query = dns.message.make_query(f"n{i}.example.", "A", use_edns=False)
                s.sendto(query.to_wire(), server.address)
                response = dns.message.from_wire(s.recv(512))
                answered += response.rcode() == dns.rcode.NXDOMAIN and response.id == query.id
        assert answered == 200
    finally:
        server.stop()


def test_cpu_affinity_pins_worker_i_to_cpu_i(testset_binary):
    cpus = os.cpu_count()
    server = Server(testset_binary, "--threads", str(cpus), "--cpu-affinity")
    try:
        allowed = sorted(
            next(line.split()[1] for line in (task / "status").read_text().splitlines()
                 if line.startswith("Cpus_allowed_list:"))
            for task in threads_of(server))
        assert allowed == sorted(str(i) for i in range(cpus))
    finally:
        server.stop()


def test_answer_leaves_from_the_address_the_query_came_to(testset_binary):
    """Listening on 0.0.0.0, a query sent to 127.0.0.2 is answered from 127.0.0.2 (a
    connected UDP socket accepts nothing else); IP_PKTINFO makes it so."""
    server = Server(testset_binary, listen=("0.0.0.0:0",))
    try:
        port = server.address[1]
        for destination in ("127.0.0.2", "127.0.0.1"):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(2)
                s.connect((destination, port))
                s.send(dns.message.make_query("www.example.", "A", use_edns=False).to_wire())
                response = dns.message.from_wire(s.recv(512))
                assert len(response.answer) == 1
    finally:
        server.stop()


def test_udp_buffer_sizes_are_set(testset_binary):
    server = Server(testset_binary, "--udp-rcvbuf", "262144", "--udp-sndbuf", "131072")
    try:
        assert server.query("www.example.", "A").rcode() == dns.rcode.NOERROR
    finally:
        server.stop()
