"""The cc stage's fast path (compiler/toolchain/elfsplice.py): a server linked with a placeholder for the
data, then given zonedata.bin, is byte for byte the server the assembler and the linker make
from the same zonedata.c and zonedata.bin; it runs; and where elfsplice refuses a linked file,
the build makes the full link instead."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import dns.rdatatype
import pytest

from conftest import ROOT, ZONES, Server, build_set, data_beside
from zonebake.toolchain import cc, elfsplice

# zonedata.bin sizes (bytes): 74,723 (3 past a multiple of 8), 1,320 (a multiple of 8, not of
# 16) and 70,598 (6 past one): the unloaded sections after the data land on differently padded
# offsets. test_any_size_of_data takes the padding through every case.
ZONE_SETS = {
    "example zones": ["-c", str(ROOT / "zonebake.toml")],
    "one small zone": ["--zone", f"example.net.={ZONES / 'example.net.zone'}"],
    "test set": ["-c", str(ZONES / "testset.toml")],
}


def first_difference(one: bytes, other: bytes) -> int | None:
    """Where two files differ (None if they do not): a readable failure for megabytes."""
    if one == other:
        return None
    return next((i for i, (a, b) in enumerate(zip(one, other)) if a != b),
                min(len(one), len(other)))


@pytest.fixture
def splices(monkeypatch):
    """The files elfsplice wrote in this test: empty if cc.py fell back to the full link."""
    written = []
    real_splice = elfsplice.splice

    def splice(linked: Path, data: Path, output: Path) -> None:
        real_splice(linked, data, output)
        written.append(output)
    monkeypatch.setattr(elfsplice, "splice", splice)
    return written


def spliced_and_full(outdir: Path, splices: list[Path]) -> tuple[bytes, bytes]:
    """The server compile_server splices from OUTDIR's zonedata.c and zonedata.bin, and the
    one the assembler and the linker make from them."""
    cc.compile_server(outdir / "zonedata.c", outdir / "spliced")
    assert splices, "compile_server fell back to the full link"
    cc.compile_server(outdir / "zonedata.c", outdir / "full", splice=False)
    return (outdir / "spliced").read_bytes(), (outdir / "full").read_bytes()


@pytest.mark.parametrize("args", ZONE_SETS.values(), ids=ZONE_SETS.keys())
def test_the_spliced_server_is_the_linked_one(args, tmp_path, splices):
    built = build_set(tmp_path, *args).read_bytes()
    data_beside(tmp_path)
    spliced, full = spliced_and_full(tmp_path, splices)
    assert first_difference(spliced, full) is None
    assert first_difference(built, full) is None  # `zonebake build` writes the data in
    assert len(full) > (tmp_path / "zonedata.bin").stat().st_size


@pytest.fixture(scope="module")
def small_zonedata_c(tmp_path_factory) -> str:
    outdir = tmp_path_factory.mktemp("small")
    build_set(outdir, *ZONE_SETS["one small zone"])
    return (outdir / "zonedata.c").read_text()


@pytest.mark.parametrize("size", [*range(1, 10), 4095, 4096, 4097, 65536 + 13])
def test_any_size_of_data(size, small_zonedata_c, tmp_path, splices):
    """SIZE bytes in place of the zones' data (every remainder modulo 8, .symtab's
    alignment, and around a page): the server would not work, but the link is as valid as
    any. zonedata.c does not say the data's size (the data's head does)."""
    (tmp_path / "zonedata.c").write_text(small_zonedata_c)
    (tmp_path / "zonedata.bin").write_bytes(bytes(i * 7 % 251 for i in range(size)))
    spliced, full = spliced_and_full(tmp_path, splices)
    assert first_difference(spliced, full) is None


def test_the_spliced_server_answers(tmp_path, splices):
    binary = build_set(tmp_path, "--zone", f"example.={ZONES / 'example.zone'}")
    data_beside(tmp_path)
    cc.compile_server(tmp_path / "zonedata.c", binary)
    assert splices == [binary.with_name(f".{binary.name}.tmp")]
    server = Server(binary)
    try:
        response = server.query("www.example.", "A")
        assert sorted(rdata.to_text() for rrset in response.answer for rdata in rrset
                      if rrset.rdtype == dns.rdatatype.A) == ["192.0.2.10", "192.0.2.11"]
        assert server.query("mail.example.", "A").answer[0].ttl == 300
    finally:
        server.stop()


def test_a_refusal_falls_back_to_the_full_link(tmp_path, monkeypatch):
    build_set(tmp_path, *ZONE_SETS["one small zone"])
    data_beside(tmp_path)
    compiles = []
    real_run = cc.run

    def run(command: list[str], cwd: Path | None) -> str:
        if "zonedata.c" in command:
            compiles.append("-DZB_DATA_PLACEHOLDER" in command)
        return real_run(command, cwd)

    def refuse(linked: Path, data: Path, output: Path) -> None:
        raise elfsplice.Refused("for the test")
    monkeypatch.setattr(cc, "run", run)
    monkeypatch.setattr(elfsplice, "splice", refuse)
    # Linked now, not taken from the cache (where the build above left it).
    monkeypatch.setattr(cc, "_link_key", lambda *_: f"{tmp_path.name}-{time.time_ns()}")
    cc.compile_server(tmp_path / "zonedata.c", tmp_path / "fallback")
    assert compiles == [True, False]  # the placeholder, then the data
    cc.compile_server(tmp_path / "zonedata.c", tmp_path / "full", splice=False)
    assert first_difference((tmp_path / "fallback").read_bytes(),
                            (tmp_path / "full").read_bytes()) is None
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_data_section_linked_among_the_rest_is_refused(tmp_path, monkeypatch):
    """As the manual build links it: after .rodata, in the read-only segment with it."""
    build_set(tmp_path, *ZONE_SETS["one small zone"])
    data_beside(tmp_path)
    refusals = []
    real_splice = elfsplice.splice

    def splice(linked: Path, data: Path, output: Path) -> None:
        try:
            real_splice(linked, data, output)
        except elfsplice.Refused as exc:
            refusals.append(str(exc))
            raise
    monkeypatch.setattr(elfsplice, "splice", splice)
    monkeypatch.setattr(cc, "LDFLAGS", ["-Wl,--build-id=none"])
    cc.compile_server(tmp_path / "zonedata.c", tmp_path / "fallback")
    assert refusals == [f"the last PT_LOAD segment is not {elfsplice.SECTION} alone"]
    cc.compile_server(tmp_path / "zonedata.c", tmp_path / "full", splice=False)
    assert first_difference((tmp_path / "fallback").read_bytes(),
                            (tmp_path / "full").read_bytes()) is None


@pytest.fixture
def placeholder_server(tmp_path, monkeypatch) -> Path:
    """A server as linked with the placeholder, before the splice: a copy of it."""
    build_set(tmp_path, *ZONE_SETS["one small zone"])
    data_beside(tmp_path)
    copy = tmp_path / "linked"
    real_splice = elfsplice.splice

    def splice(linked: Path, data: Path, output: Path) -> None:
        shutil.copy(linked, copy)
        real_splice(linked, data, output)
    monkeypatch.setattr(elfsplice, "splice", splice)
    cc.compile_server(tmp_path / "zonedata.c", tmp_path / "spliced")
    monkeypatch.undo()  # the tests call the real one
    return copy


def change_section(image: bytearray, name: bytes, **fields: int) -> None:
    """Give the header of the section called NAME these field values."""
    header = elfsplice.Header._make(elfsplice.EHDR.unpack_from(image, 0))

    def section(index: int) -> tuple[int, elfsplice.Section]:
        at = header.shoff + index * elfsplice.SHDR.size
        return at, elfsplice.Section._make(elfsplice.SHDR.unpack_from(image, at))
    names = section(header.shstrndx)[1].offset
    for at, found in map(section, range(header.shnum)):
        if image[names + found.name:].startswith(name + b"\0"):
            elfsplice.SHDR.pack_into(image, at, *found._replace(**fields))
            return
    raise AssertionError(f"no section {name!r}")


def elf32(image: bytearray) -> None:
    image[4] = 1


def big_endian(image: bytearray) -> None:
    image[5] = 2


def truncated(image: bytearray) -> None:
    del image[60:]


def renamed_section(image: bytearray) -> None:
    at = image.index(elfsplice.SECTION.encode() + b"\0")
    image[at:at + len(elfsplice.SECTION)] = b".otherdat"


def other_layout(image: bytearray) -> None:
    """.comment now asks for an alignment the linker did not give it."""
    change_section(image, b".comment", addralign=4096)


def data_segment_writable(image: bytearray) -> None:
    change_section(image, elfsplice.SECTION.encode(),
                   flags=elfsplice.SHF_ALLOC | elfsplice.SHF_WRITE)


def loaded_section_after_data(image: bytearray) -> None:
    """.comment, made a loaded section, now sits where only unloaded ones may."""
    change_section(image, b".comment", flags=elfsplice.SHF_ALLOC)


CRAFTED = {  # a change to the linked file, and why elfsplice refuses it
    elf32: "not an ELF64 little-endian file",
    big_endian: "not an ELF64 little-endian file",
    truncated: "the file ends inside its headers",
    renamed_section: "0 sections named .zonedata",
    other_layout: "the linker laid out the unloaded sections in another way",
    data_segment_writable: ".zonedata is not loaded read-only data",
    loaded_section_after_data: ".zonedata is not the last of the loaded contents",
}


@pytest.mark.parametrize("craft", CRAFTED, ids=[craft.__name__ for craft in CRAFTED])
def test_what_elfsplice_does_not_know_is_refused(craft, placeholder_server, tmp_path):
    image = bytearray(placeholder_server.read_bytes())
    elfsplice.splice(placeholder_server, tmp_path / "zonedata.bin", tmp_path / "as-linked")
    assert (tmp_path / "as-linked").exists()  # the file untouched is accepted
    craft(image)
    placeholder_server.write_bytes(image)
    with pytest.raises(elfsplice.Refused, match=re.escape(CRAFTED[craft])):
        elfsplice.splice(placeholder_server, tmp_path / "zonedata.bin", tmp_path / "crafted")
    assert not (tmp_path / "crafted").exists()


def test_a_file_that_is_not_elf_or_empty_data_is_refused(placeholder_server, tmp_path):
    (tmp_path / "empty.bin").write_bytes(b"")
    with pytest.raises(elfsplice.Refused, match="not an ELF64"):
        elfsplice.splice(tmp_path / "zonedata.c", tmp_path / "zonedata.bin", tmp_path / "out")
    with pytest.raises(elfsplice.Refused, match="or there is none"):
        elfsplice.splice(placeholder_server, tmp_path / "empty.bin", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sizes", [(70_000, 70_000), (70_000, 50_001), (50_001, 70_003)],
                         ids=["same size", "shrunk", "grown"])
def test_a_file_prefilled_with_the_earlier_data_keeps_it_where_the_new_data_goes(
        sizes, placeholder_server, tmp_path):
    """prefill copies an earlier server's data into the next server's file where it lay;
    prepare then keeps as much of it as the new data's place holds, zeros after it, and
    writes the head and the tail around it as for any data: the file is the one `splice`
    writes for those octets. Where the data goes elsewhere, nothing is kept."""
    before, after = sizes
    earlier_data = bytes(i * 7 % 251 for i in range(before))
    (tmp_path / "earlier.bin").write_bytes(earlier_data)
    elfsplice.splice(placeholder_server, tmp_path / "earlier.bin", tmp_path / "earlier")
    span = elfsplice.span(tmp_path / "earlier")
    source = os.open(tmp_path / "earlier", os.O_RDONLY)
    destination = os.open(tmp_path / "next", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        elfsplice.prefill(source, destination, span)
    finally:
        os.close(source)
        os.close(destination)
    at, kept = elfsplice.prepare(placeholder_server, tmp_path / "next", after, span)
    assert (at, kept) == (span[0], min(before, after))
    (tmp_path / "kept.bin").write_bytes(earlier_data[:kept] + bytes(after - kept))
    elfsplice.splice(placeholder_server, tmp_path / "kept.bin", tmp_path / "expected")
    assert first_difference((tmp_path / "next").read_bytes(),
                            (tmp_path / "expected").read_bytes()) is None
    # Told of data at another place: a fresh file, a hole where the data goes.
    assert elfsplice.prepare(placeholder_server, tmp_path / "next", after,
                             (span[0] + 4096, span[1])) == (span[0], 0)
    (tmp_path / "zeros.bin").write_bytes(bytes(after))
    elfsplice.splice(placeholder_server, tmp_path / "zeros.bin", tmp_path / "expected")
    assert (tmp_path / "next").read_bytes() == (tmp_path / "expected").read_bytes()
