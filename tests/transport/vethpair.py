"""Two network namespaces joined by a veth pair, for the AF_XDP tests: a server side and a client
side, made by the test and deleted when it ends, failed or not. The processes a test starts in
them are its own to stop (by PID) before that."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import itertools
import os
import socket
import struct
import subprocess

import pytest

from conftest import require

SERVER_V4, CLIENT_V4 = "198.18.0.1", "198.18.0.2"
SERVER_V6, CLIENT_V6 = "fd00::1", "fd00::2"
AF_XDP = 44
CLONE_NEWNET = 0x40000000
SIOCETHTOOL, ETHTOOL_STXCSUM = 0x8946, 0x17

_libc = ctypes.CDLL(None, use_errno=True)
_made = itertools.count()


def require_af_xdp() -> None:
    """Root, a kernel with AF_XDP sockets, and iproute2. CI has them and must run the tests
    (as conftest's `require` says for tools); elsewhere the test is skipped with the reason."""
    why = None
    if os.geteuid() != 0:
        why = "AF_XDP sockets and XDP programs take root (CAP_NET_ADMIN, CAP_BPF, CAP_NET_RAW)"
    else:
        try:
            socket.socket(AF_XDP, socket.SOCK_RAW, 0).close()
        except OSError as error:
            why = f"the kernel has no AF_XDP sockets ({error.strerror}; CONFIG_XDP_SOCKETS)"
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    require("iproute2", "ip")


def ip(*args: str) -> str:
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


@contextlib.contextmanager
def inside(namespace: str):
    """This thread in `namespace` for the block: the sockets it makes there stay there."""
    with open("/proc/thread-self/ns/net") as home, open(f"/run/netns/{namespace}") as there:
        if _libc.setns(there.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {namespace}")
        try:
            yield
        finally:
            if _libc.setns(home.fileno(), CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")


class VethPair:
    """The server's namespace with interface `server_if` (198.18.0.1, fd00::1), the client's
    with `client_if` (198.18.0.2, fd00::2); `queues` receive and transmit queues each."""

    def __init__(self, queues: int = 1):
        tag = f"{os.getpid()}-{next(_made)}"
        self.namespaces = {"server": f"zbxdp-s{tag}", "client": f"zbxdp-c{tag}"}
        self.server_if, self.client_if = "xs0", "xc0"
        self.queues = queues

    def __enter__(self) -> VethPair:
        try:
            self._make()
        except BaseException:
            self._remove()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._remove()

    def _make(self) -> None:
        server, client = self.namespaces["server"], self.namespaces["client"]
        queues = ["numtxqueues", str(self.queues), "numrxqueues", str(self.queues)]
        ip("netns", "add", server)
        ip("netns", "add", client)
        ip("-n", server, "link", "add", self.server_if, *queues, "type", "veth", "peer",
           "name", self.client_if, "netns", client, *queues)
        for namespace, name, v4, v6 in [(server, self.server_if, SERVER_V4, SERVER_V6),
                                        (client, self.client_if, CLIENT_V4, CLIENT_V6)]:
            ip("-n", namespace, "addr", "add", f"{v4}/24", "dev", name)
            ip("-n", namespace, "addr", "add", f"{v6}/64", "dev", name, "nodad")
            ip("-n", namespace, "link", "set", "lo", "up")
            ip("-n", namespace, "link", "set", name, "up")
        # A veth leaves the UDP checksum of what a local socket sends to the receiver
        # (checksum offload: the packet holds only the pseudo-header's sum, the socket buffer
        # says so). A frame taken by AF_XDP has no socket buffer, and an echo of it would
        # carry that partial checksum back: the client's checksums computed in full instead.
        with inside(client), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            value = ctypes.create_string_buffer(struct.pack("II", ETHTOOL_STXCSUM, 0), 8)
            ifreq = struct.pack("16sP", self.client_if.encode(), ctypes.addressof(value))
            fcntl.ioctl(s, SIOCETHTOOL, ifreq.ljust(40, b"\0"))

    def _remove(self) -> None:
        for namespace in self.namespaces.values():
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)

    def exec(self, side: str) -> list[str]:
        """The command prefix that runs a program in `side`'s namespace."""
        return ["ip", "netns", "exec", self.namespaces[side]]

    def socket(self, side: str, family: int, kind: int = socket.SOCK_DGRAM,
               proto: int = 0) -> socket.socket:
        with inside(self.namespaces[side]):
            return socket.socket(family, kind, proto)

    def enter(self, side: str):
        """A `preexec_fn` that moves the child into `side`'s namespace before its exec: the
        program runs there as under `exec`, with the PID Popen knows (nothing in between)."""
        path = f"/run/netns/{self.namespaces[side]}"

        def preexec() -> None:
            fd = os.open(path, os.O_RDONLY)
            failed = _libc.setns(fd, CLONE_NEWNET) != 0
            os.close(fd)
            if failed:
                raise OSError(ctypes.get_errno(), f"setns {path}")
        return preexec

    def set_mtu(self, mtu: int) -> None:
        """Both ends' MTU."""
        for side, name in [("server", self.server_if), ("client", self.client_if)]:
            ip("-n", self.namespaces[side], "link", "set", "dev", name, "mtu", str(mtu))

    def readdress(self, server_mac: str, client_mac: str, server: list[str],
                  client: list[str]) -> None:
        """Other MAC addresses for the two ends, and more IP addresses (IPv4 or IPv6) on
        each, the other side's reached by a host route on the link with its MAC written in
        the neighbour table: nothing waits on ARP or neighbour discovery."""
        ends = [("server", self.server_if, server_mac, server),
                ("client", self.client_if, client_mac, client)]
        for (side, name, mac, own), (_, _, peer_mac, peers) in zip(ends, ends[::-1]):
            namespace = self.namespaces[side]
            ip("-n", namespace, "link", "set", "dev", name, "address", mac)
            for address in own:
                ip("-n", namespace, "addr", "add", address, "dev", name,
                   *(["nodad"] if ":" in address else []))
            for address in peers:
                ip("-n", namespace, "route", "add", address, "dev", name)
                ip("-n", namespace, "neigh", "replace", address, "lladdr", peer_mac, "dev",
                   name, "nud", "permanent")

    def xdp_on_server(self) -> str:
        """What `ip link show` says of the server interface's XDP program: its mode (`xdp`
        for the driver's, `xdpgeneric`) and its `prog/xdp` line; "" when none is attached."""
        shown = ip("-n", self.namespaces["server"], "link", "show", "dev", self.server_if)
        modes = [word for word in shown.split() if word.startswith("xdp")]
        programs = [line.strip() for line in shown.splitlines() if "prog/xdp" in line]
        return " ".join(modes + programs)
