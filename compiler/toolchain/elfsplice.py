"""Put the data into a server linked with a one-byte placeholder for it: the result is the
file the linker writes when it reads the data itself, byte for byte.

Why: the data is most of the binary (441 MiB for a million names). Through the assembler
and the linker it is copied twice, into an object and then into the binary, which was most of
the cc stage. Linked with a placeholder instead, the link is small, and `prepare` writes the
server's file but for the data, a hole the core writes the data into: the data is written
once, never copied. `splice` copies a zonedata.bin in instead (by the kernel,
copy_file_range), where the data came alone. `span` finds the data in a server again.

What makes it possible: cc.py links the data's section (SECTION) at an address far above the
rest of the program, and GNU ld then gives it a PT_LOAD segment of its own, the last one, at
the end of the loaded part of the file. Nothing before it depends on its size but the ELF
header's e_shoff and that segment's sizes. After it come only the sections that are not
loaded (.comment, .symtab, .strtab, .shstrtab; debug info in a sanitizer build) and the
section header table, which move when the data grows: ld lays them out in section header
order, each at the next multiple of its sh_addralign, and the header table at the next
multiple of 8 (binutils' bfd/elf.c: _bfd_elf_assign_file_position_for_section,
align_file_position). Before relying on that rule for the data, `splice` checks that it gives
back the linked file's own tail, padding included. The symbol table needs no change: zb_data
has the data's size with the placeholder too (zonedata.c.j2).

Anything else raises Refused, and cc.py has the assembler and the linker do it all, which
stays the reference: another ELF class or byte order, a section or segment other than ours at
or past the data, a segment holding more than the data, a file that does not end as the rule
says. Only ELF64 little-endian is read: zonebake's data is little-endian (runtime/zonedata.h),
and the servers it is built for are 64-bit (x86_64, aarch64).

A rebuild without the driver (core/driverless.py) imports it at the command's start, while
the core works beside it: no pathlib, shutil or collections (a namedtuple of its own,
`_record`), which took 10 ms of the processor the core wanted.
"""

from __future__ import annotations

import errno
import os
import stat
import struct

SECTION = ".zonedata"  # zonedata.c.j2 puts zb_data there


def _record(names: str) -> type:
    """A tuple whose items are also named NAMES, as collections.namedtuple makes one: `_make`
    and `_replace` included."""
    fields = tuple(names.split())

    class Fields(tuple):
        __slots__ = ()
        _fields = fields

        def __new__(cls, *values):
            if len(values) != len(fields):
                raise TypeError(f"{len(fields)} values, not {len(values)}")
            return tuple.__new__(cls, values)

        @classmethod
        def _make(cls, values):
            return cls(*values)

        def _replace(self, **changes):
            made = type(self)(*(changes.pop(name, value) for name, value in zip(fields, self)))
            if changes:
                raise ValueError(f"no fields {sorted(changes)}")
            return made

    for i, name in enumerate(fields):
        setattr(Fields, name, property(lambda self, i=i: self[i]))
    return Fields


# ELF64 little-endian structures, fields as the System V gABI names them.
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
Header = _record("ident type machine version entry phoff shoff flags ehsize "
                 "phentsize phnum shentsize shnum shstrndx")
PHDR = struct.Struct("<IIQQQQQQ")
Segment = _record("type flags offset vaddr paddr filesz memsz align")
SHDR = struct.Struct("<IIQQQQIIQQ")
Section = _record("name type flags addr offset size link info addralign entsize")
ELF64_LE = b"\x7fELF\x02\x01\x01"  # magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT
PT_LOAD = 1
SHT_NOBITS = 8
SHF_WRITE, SHF_ALLOC = 0x1, 0x2
SHN_LORESERVE = 0xFF00  # e_shnum and e_shstrndx at or above it are stored elsewhere
PN_XNUM = 0xFFFF  # likewise e_phnum
SHDR_TABLE_ALIGN = 8  # bfd: 1 << log_file_align for ELF64


class Refused(Exception):
    """The linked file is not one `splice` knows how to complete; the message says why."""


def splice(linked: str | os.PathLike[str], data: str | os.PathLike[str],
           output: str | os.PathLike[str]) -> None:
    """Write OUTPUT: LINKED (read whole: it is small) with the contents of its SECTION replaced
    by DATA's."""
    size = os.stat(data).st_size
    at, _ = prepare(linked, output, size)
    descriptor = os.open(output, os.O_WRONLY)
    try:
        with open(data, "rb") as source:
            os.lseek(descriptor, at, os.SEEK_SET)
            _copy(source.fileno(), descriptor, size)
    finally:
        os.close(descriptor)


def prepare(linked: Linked | str | os.PathLike[str], output: str | os.PathLike[str], size: int,
            prefilled: tuple[int, int] | None = None) -> tuple[int, int]:
    """Write OUTPUT as `splice` would for data of SIZE octets, but for the data itself: where
    it goes, the first of the returned (offset, kept), is left a hole (zeros) for the core to
    write the data into (the build's layout, cc.EarlyServer), so that it is written once,
    never copied. `prefilled`: OUTPUT holds an earlier server's data already, (offset,
    length) as `span` gives it; where that is where this data goes, its first `kept` octets
    (at most SIZE) stay, and the core writes only what differs (zeros included)."""
    linked = linked if isinstance(linked, Linked) else Linked(linked)
    if size == 0:
        raise Refused(f"{SECTION} is not loaded read-only data, or there is none")
    start = linked.data_offset
    kept = min(prefilled[1], size) if prefilled and prefilled[0] == start else 0
    descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | (0 if kept else os.O_TRUNC),
                         0o600)
    try:
        if kept:
            os.ftruncate(descriptor, start + kept)  # past the data kept: zeros again
        linked.write(descriptor, size)
    finally:
        os.close(descriptor)
    os.chmod(output, linked.mode)  # executable, as the linker made it
    return start, kept


def prepare_for_core(linked: Linked | str | os.PathLike[str], output: str | os.PathLike[str],
                     size: int, prefilled: tuple[int, int] | None = None
                     ) -> tuple[int, int] | None:
    """`prepare`, where the core can write the data into OUTPUT: at a page boundary (it maps
    the file there), and under a path a line can give it. None where not, or where LINKED is
    refused or OUTPUT cannot be written (OUTPUT may be written already)."""
    try:
        at, kept = prepare(linked, output, size, prefilled)
    except (Refused, OSError):
        return None
    if at % os.sysconf("SC_PAGESIZE") or "\n" in str(output):
        return None
    return at, kept


# The prefill's buffer: a read and a write of it take less of the processor than
# copy_file_range, which ext4 does a page at a time through a pipe.
PREFILL_BUFFER = 256 << 10


def prefill(source: int, destination: int, span: tuple[int, int]) -> None:
    """The data of the server open as SOURCE, where `span` says it lies, copied into
    DESTINATION at the same offset: `prepare` keeps what is still in its place. Its blocks
    are allocated first, at once: a copy into a sparse file on ext4 allocates each as it
    writes it (delayed allocation), which took half as long again. Raises OSError where the
    file cannot be read or written."""
    at, length = span
    try:
        os.posix_fallocate(destination, at, length)
    except OSError:
        pass  # the copy allocates them
    buffer = bytearray(min(PREFILL_BUFFER, length) or 1)
    view = memoryview(buffer)
    done = 0
    while done < length:
        count = os.preadv(source, [view[:length - done]], at + done)
        if count == 0:
            raise OSError(errno.EIO, "the earlier server is shorter than its data")
        written = 0
        while written < count:
            written += os.pwrite(destination, view[written:count], at + done + written)
        done += count


def span(binary: str | os.PathLike[str]) -> tuple[int, int]:
    """Where SECTION's contents lie in BINARY, (offset, length), its headers alone read: the
    data of a server, which the next build copies what it can from (the core's reuse.c)."""
    with open(binary, "rb") as file:
        header = Header._make(_unpack(EHDR, file.read(EHDR.size), 0))
        if not header.ident.startswith(ELF64_LE) or header.shentsize != SHDR.size or \
                not 0 < header.shstrndx < header.shnum < SHN_LORESERVE:
            raise Refused("not an ELF64 little-endian file with section headers")
        file.seek(header.shoff)
        table = file.read(header.shnum * SHDR.size)
        sections = [Section._make(_unpack(SHDR, table, i * SHDR.size))
                    for i in range(header.shnum)]
        names = sections[header.shstrndx]
        file.seek(names.offset)
        strings = file.read(names.size)
        size = os.fstat(file.fileno()).st_size
    ours = _ours(_names(strings, sections))
    if len(ours) != 1 or sections[ours[0]].type == SHT_NOBITS or \
            sections[ours[0]].offset + sections[ours[0]].size > size:
        raise Refused(f"no {SECTION} in the file")
    return sections[ours[0]].offset, sections[ours[0]].size


class Linked:
    """A server linked with the placeholder, read and checked once: its head and tail written
    around data of any size (`write`). A rebuild without the driver (core/driverless.py)
    reads it while its core works, before the core asks where the data goes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        with open(path, "rb") as file:
            self.image = file.read()
            self.mode = stat.S_IMODE(os.fstat(file.fileno()).st_mode)
        self._layout = _layout(self.image)
        _, _, sections, data, _, _ = self._layout
        self.data_offset = sections[data].offset  # where the data goes

    def write(self, descriptor: int, size: int) -> None:
        """Write the head and the tail around data of SIZE bytes (at `data_offset`) into the
        file open as DESCRIPTOR. The head is the linked file's up to the data, but for the
        ELF header and the data's segment header (their sizes and offsets), written over it:
        not copied and patched (a megabyte, and its pages, on the way of a rebuild that
        waits for it)."""
        header, segments, sections, data, load, after = self._layout
        start = self.data_offset
        tail = _tail(self.image, sections, after, data, start + size)
        header = header._replace(shoff=start + size + len(tail) - header.shnum * SHDR.size)
        segment = segments[load]._replace(filesz=size, memsz=size)
        _write_at(descriptor, memoryview(self.image)[:start], 0)
        _write_at(descriptor, EHDR.pack(*header), 0)
        _write_at(descriptor, PHDR.pack(*segment), header.phoff + load * PHDR.size)
        _write_at(descriptor, tail, start + size)


def _layout(image: bytes) -> tuple:
    """The linked file's header, segments and sections, the index of our section, of its
    segment and of the sections after it, once the file is found to be as the linker lays
    it out (the module's docstring); else Refused."""
    header = Header._make(_unpack(EHDR, image, 0))
    if not header.ident.startswith(ELF64_LE):
        raise Refused("not an ELF64 little-endian file")
    if (header.phentsize, header.shentsize) != (PHDR.size, SHDR.size) or \
            header.phnum >= PN_XNUM or not 0 < header.shstrndx < header.shnum < SHN_LORESERVE:
        raise Refused("unusual ELF header")
    segments = [Segment._make(_unpack(PHDR, image, header.phoff + i * PHDR.size))
                for i in range(header.phnum)]
    sections = [Section._make(_unpack(SHDR, image, header.shoff + i * SHDR.size))
                for i in range(header.shnum)]
    table = sections[header.shstrndx]
    ours = _ours(_names(image[table.offset:table.offset + table.size], sections))
    if len(ours) != 1:
        raise Refused(f"{len(ours)} sections named {SECTION}")
    data = sections[ours[0]]
    start, end = data.offset, data.offset + data.size
    if data.flags & (SHF_ALLOC | SHF_WRITE) != SHF_ALLOC or data.type == SHT_NOBITS or \
            end > len(image):
        raise Refused(f"{SECTION} is not loaded read-only data, or there is none")

    # The data's segment: the last PT_LOAD, holding our section and nothing else.
    loads = [i for i, segment in enumerate(segments) if segment.type == PT_LOAD]
    last = segments[loads[-1]] if loads else Segment(*[0] * len(Segment._fields))
    if (last.offset, last.vaddr, last.paddr, last.filesz, last.memsz) != \
            (start, data.addr, data.addr, data.size, data.size):
        raise Refused(f"the last PT_LOAD segment is not {SECTION} alone")
    # Everything else that is in the file ends before the data: the headers, every other
    # segment and loaded section. Only unloaded sections come after it.
    ends = [EHDR.size, header.phoff + header.phnum * PHDR.size]
    ends += [s.offset + s.filesz for i, s in enumerate(segments) if i != loads[-1]]
    ends += [s.offset + s.size for i, s in enumerate(sections)
             if s.flags & SHF_ALLOC and s.type != SHT_NOBITS and i != ours[0]]
    after = [i for i, s in enumerate(sections) if i != 0 and not s.flags & SHF_ALLOC]
    if max(ends) > start or any(sections[i].offset < end for i in after):
        raise Refused(f"{SECTION} is not the last of the loaded contents")

    # The rule must give back the file as the linker wrote it, section header table last,
    # before it is trusted with the data's size.
    if _tail(image, sections, after, ours[0], end) != image[end:] or \
            header.shoff != len(image) - header.shnum * SHDR.size:
        raise Refused("the linker laid out the unloaded sections in another way")
    return header, segments, sections, ours[0], loads[-1], after


def _tail(image: bytes, sections: list[Section], after: list[int], data: int,
          data_end: int) -> bytes:
    """What follows the data (section DATA) when it ends at DATA_END: the unloaded sections
    AFTER and the section header table, where the linker puts them, the gaps zero-filled."""
    tail = bytearray()
    placed = list(sections)
    for i in after:  # in section header order, as the linker places them
        offset = _align(data_end + len(tail), sections[i].addralign)
        tail += bytes(offset - data_end - len(tail))
        placed[i] = sections[i]._replace(offset=offset)
        if sections[i].type != SHT_NOBITS:
            tail += image[sections[i].offset:sections[i].offset + sections[i].size]
    tail += bytes(_align(data_end + len(tail), SHDR_TABLE_ALIGN) - data_end - len(tail))
    placed[data] = sections[data]._replace(size=data_end - sections[data].offset)
    for section in placed:
        tail += SHDR.pack(*section)
    return bytes(tail)


def _ours(names: list[bytes]) -> list[int]:
    """The indexes of the sections named SECTION."""
    return [i for i, name in enumerate(names) if name == SECTION.encode()]


def _names(strings: bytes, sections: list[Section]) -> list[bytes]:
    """Each section's name, from the section name table's octets STRINGS."""
    names = []
    for section in sections:
        name_end = strings.find(b"\0", section.name)
        if name_end < 0:
            raise Refused("a section name runs past the section name table")
        names.append(strings[section.name:name_end])
    return names


def _align(offset: int, alignment: int) -> int:
    return offset if alignment <= 1 else -(-offset // alignment) * alignment


def _unpack(layout: struct.Struct, image: bytes, offset: int) -> tuple:
    if offset + layout.size > len(image):
        raise Refused("the file ends inside its headers")
    return layout.unpack_from(image, offset)


def _write_at(descriptor: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(descriptor, view, offset)
        view, offset = view[written:], offset + written


def _copy(source: int, destination: int, size: int) -> None:
    """SIZE bytes from SOURCE's position to DESTINATION's, inside the kernel: copy_file_range
    (which may even share the blocks, on a file system that can), else sendfile."""
    copied = 0
    while copied < size:
        try:
            count = os.copy_file_range(source, destination, size - copied)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL,
                                 errno.EPERM):
                raise
            count = os.sendfile(destination, source, None, size - copied)
        if count == 0:
            raise Refused("the data file is shorter than it was")
        copied += count
