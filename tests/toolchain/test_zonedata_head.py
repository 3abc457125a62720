"""zonedata.c holds the set's configuration alone; the layout's numbers (where the tables are,
the hash's seed, the zones' serials) are the data's head (runtime/zonedata.h, struct zb_head),
which the server reads as it starts: a change of the zones changes the data, never zonedata.c,
and a server whose data was made for another set says so and does not start."""

from __future__ import annotations

import shutil
import subprocess

import dns.rcode

from conftest import Server, build_set, data_beside
from zonebake.toolchain import cc


def write_zone(path, serial: int, hosts: int) -> None:
    lines = ["$TTL 300", f"@ SOA ns hostmaster {serial} 7200 900 1209600 300", "@ NS ns",
             "ns A 192.0.2.1"]
    lines += [f"host{i} A 10.0.{i >> 8}.{i & 255}" for i in range(hosts)]
    path.write_text("\n".join(lines) + "\n")


def test_a_changed_zone_leaves_zonedata_c_as_it_was(tmp_path):
    zone = tmp_path / "head.zone"
    write_zone(zone, 1, 3)
    binary = build_set(tmp_path / "out", "--zone", f"head.example.={zone}")
    before = (tmp_path / "out" / "zonedata.c").read_bytes()
    size_before = data_beside(tmp_path / "out").stat().st_size
    write_zone(zone, 2, 300)  # more names: other groups, another size, another serial
    build_set(tmp_path / "out", "--zone", f"head.example.={zone}")
    assert (tmp_path / "out" / "zonedata.c").read_bytes() == before
    assert data_beside(tmp_path / "out").stat().st_size > size_before
    shown = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                           timeout=10)
    assert shown.returncode == 0 and shown.stdout.splitlines()[1:] == ["head.example. serial 2"]
    server = Server(binary)
    try:
        response = server.query("host299.head.example.", "A")
        assert response.rcode() == dns.rcode.NOERROR
        assert [rdata.to_text() for rrset in response.answer for rdata in rrset] == \
            ["10.0.1.43"]
        assert server.query("host300.head.example.", "A").rcode() == dns.rcode.NXDOMAIN
    finally:
        server.stop()


def test_data_made_for_another_set_is_refused_at_start(tmp_path):
    """Linked by hand, one set's zonedata.c with another's data (taken out of its server):
    the head's zones are not zonedata.c's."""
    one, two = tmp_path / "one.zone", tmp_path / "two.zone"
    write_zone(one, 1, 3)
    write_zone(two, 1, 3)
    build_set(tmp_path / "a", "--zone", f"one.example.={one}")
    build_set(tmp_path / "b", "--zone", f"one.example.={one}", "--zone", f"two.example.={two}")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(tmp_path / "a" / "zonedata.c", mixed)
    data_beside(mixed, tmp_path / "b" / "zonebake-server")
    cc.compile_server(mixed / "zonedata.c", mixed / "zonebake-server")
    started = subprocess.run([str(mixed / "zonebake-server"), "--version"],
                             capture_output=True, text=True, timeout=10)
    assert started.returncode == 2 and started.stdout == ""
    assert started.stderr.rstrip("\n").endswith(
        "error: the data does not belong to this server's zone set (2 zones and 0 CH names "
        "in its head, 1 and 0 compiled in)"), started.stderr
