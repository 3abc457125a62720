"""systemd socket activation, emulated: the test binds the sockets (as systemd does for
zonebake.socket), puts them at descriptors 3 and on in a forked child, sets LISTEN_FDS and
LISTEN_PID to that child's pid, and execs the server, which must serve exactly those."""

from __future__ import annotations

import errno
import os
import select
import signal
import socket
import time

import dns.message
import dns.query
import dns.rcode

from conftest import AS_ROOT, LISTENING, LOG_LINE


class Activated:
    """A server exec'd with `sockets` at descriptors 3, 4, ... as systemd passes them."""

    def __init__(self, binary, sockets, *args, listen_pid=None):
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: nothing here may raise back into pytest
            try:
                # Above any descriptor in use first, so that moving them to 3.. overwrites none.
                high = [os.dup2(s.fileno(), 100 + i) for i, s in enumerate(sockets)]
                os.dup2(write_end, 2)
                for i, fd in enumerate(high):
                    os.dup2(fd, 3 + i)
                env = dict(os.environ, LISTEN_FDS=str(len(sockets)),
                           LISTEN_PID=str(listen_pid or os.getpid()),
                           LISTEN_FDNAMES=":".join("dns" for _ in sockets))
                os.execve(str(binary), [str(binary), *AS_ROOT, *args], env)
            finally:
                os._exit(127)
        os.close(write_end)
        self.stderr, self.buffer = read_end, b""

    def line(self, timeout: float = 5) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer and time.monotonic() < deadline:
            if not select.select([self.stderr], [], [], deadline - time.monotonic())[0]:
                break
            chunk = os.read(self.stderr, 4096)
            if not chunk:
                break
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()

    def wait(self, timeout: float = 5) -> int | None:
        """The exit status once it has exited by itself, or None after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = None
                os.close(self.stderr)
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.02)
        return None

    def stop(self) -> int:
        """SIGTERM by pid; the exit status."""
        os.kill(self.pid, signal.SIGTERM)
        status = self.wait()
        if status is None:
            os.kill(self.pid, signal.SIGKILL)
            status = self.wait()
        return status


def systemd_sockets(listen: bool = True):
    """A UDP socket and a TCP socket (listening, unless told not to) on one ephemeral
    loopback port. The port the kernel picks for UDP may be taken for TCP (by another test's
    connection, say): then another port."""
    for _ in range(100):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind(udp.getsockname())
        except OSError as exc:
            udp.close()
            tcp.close()
            if exc.errno != errno.EADDRINUSE:
                raise
            continue
        if listen:
            tcp.listen()
        return udp, tcp
    raise OSError(errno.EADDRINUSE, "no loopback port free for both UDP and TCP")


def query(port, tcp=False):
    message = dns.message.make_query("www.example.", "A", use_edns=False)
    ask = dns.query.tcp if tcp else dns.query.udp
    return ask(message, "127.0.0.1", port=port, timeout=2)


def test_serves_the_sockets_systemd_passes(testset_binary):
    udp, tcp = systemd_sockets()
    port = udp.getsockname()[1]
    # TCP first: the server tells them apart by SO_TYPE, not by their order.
    server = Activated(testset_binary, [tcp, udp], "--threads", "4")
    try:
        logged = LOG_LINE.match(server.line())
        assert int(logged.group(1)) == server.pid
        # One socket of each kind for the address: four workers share them; none is bound
        # anew, so the kernel has no other socket to give a query to.
        assert logged.group(2).endswith(f"on 127.0.0.1:{port} (udp, tcp), 4 workers")
        assert len(os.listdir(f"/proc/{server.pid}/task")) == 4
        for i in range(20):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
                client.settimeout(2)
                message = dns.message.make_query(f"n{i}.example.", "A", use_edns=False)
                client.sendto(message.to_wire(), ("127.0.0.1", port))
                response = dns.message.from_wire(client.recv(512))
                assert response.id == message.id and response.rcode() == dns.rcode.NXDOMAIN
        assert query(port, tcp=True).rcode() == dns.rcode.NOERROR
    finally:
        assert server.stop() == 0
        udp.close()
        tcp.close()


def test_queries_wait_in_the_sockets_across_a_restart(testset_binary):
    """systemd holds the sockets while the service restarts: a query sent between the two
    processes waits in the socket and the next one answers it."""
    udp, tcp = systemd_sockets()
    port = udp.getsockname()[1]
    try:
        first = Activated(testset_binary, [udp, tcp])
        assert LISTENING.search(first.line())
        assert first.stop() == 0
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
            client.settimeout(5)
            message = dns.message.make_query("www.example.", "A", use_edns=False)
            client.sendto(message.to_wire(), ("127.0.0.1", port))  # nobody reads now
            second = Activated(testset_binary, [udp, tcp])
            try:
                assert LISTENING.search(second.line())
                response = dns.message.from_wire(client.recv(512))
                assert response.id == message.id and response.rcode() == dns.rcode.NOERROR
            finally:
                assert second.stop() == 0
    finally:
        udp.close()
        tcp.close()


def test_a_tcp_socket_that_does_not_listen_is_refused(testset_binary):
    udp, tcp = systemd_sockets(listen=False)
    try:
        server = Activated(testset_binary, [udp, tcp])
        assert "socket activation: descriptor 4: a TCP socket that is not listening" in \
            server.line()
        assert server.wait() == 1
    finally:
        udp.close()
        tcp.close()


def test_listen_pid_of_another_process_is_ignored(testset_binary):
    udp, tcp = systemd_sockets()
    try:
        server = Activated(testset_binary, [udp, tcp], "--listen", "127.0.0.1:0",
                           listen_pid=1)
        match = LISTENING.search(server.line())
        assert match and int(match.group(2)) != udp.getsockname()[1]
        assert server.stop() == 0
    finally:
        udp.close()
        tcp.close()


def test_listen_with_socket_activation_is_refused(testset_binary):
    udp, tcp = systemd_sockets()
    try:
        server = Activated(testset_binary, [udp, tcp], "--listen", "127.0.0.1:0")
        assert "--listen and socket activation exclude each other" in server.line()
        assert server.wait() == 1
    finally:
        udp.close()
        tcp.close()
