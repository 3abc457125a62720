"""The compiled data copied to transparent huge pages at start-up, by default
(runtime/ops/hugepages.c), by a thread while the server already answers from the binary's
mapping, once it has answered. Where it is 2 MiB or more and the kernel's THP mode is not
`never`, the server says so after its first answer, its workers move to the copy and answer
from it exactly as from the binary; with --no-huge-pages the data stays where the binary
maps it."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import dns.rcode
import dns.rdatatype
import pytest

from conftest import LOG_LINE, Server, build_set
from zonebake.toolchain import elfsplice

HOSTS = 24_000  # about 3 MiB of compiled data
HUGE_PAGE = 2 << 20


def thp_mode() -> str | None:
    """The kernel's transparent huge page mode (the bracketed word), or None without THP."""
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    match = re.search(r"\[(\w+)\]", text)
    return match.group(1) if match else None


@pytest.fixture(scope="module")
def large_set(tmp_path_factory) -> tuple[Path, int]:
    """A zone set whose data passes one huge page, and the data's length."""
    work = tmp_path_factory.mktemp("huge")
    zone = work / "big.zone"
    lines = ["$TTL 300", "@ SOA ns hostmaster 1 7200 900 1209600 300", "@ NS ns",
             "ns A 192.0.2.1"]
    lines += [f"host{i} A 10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}" for i in range(HOSTS)]
    zone.write_text("\n".join(lines) + "\n")
    binary = build_set(work / "out", "--zone", f"big.example.={zone}")
    return binary, elfsplice.span(binary)[1]


def next_message(server: Server, timeout: float) -> str | None:
    """The message of the server's next log line, or None when none comes in `timeout`."""
    line = server._read_line(timeout)
    if not line:
        return None
    match = LOG_LINE.match(line)
    assert match and int(match.group(1)) == server.process.pid, line
    return match.group(2)


def assert_answers(server: Server) -> None:
    for i in (0, 1, 4_097, HOSTS - 1):
        response = server.query(f"HOST{i}.big.example.", "A")
        assert response.rcode() == dns.rcode.NOERROR
        assert [str(rr) for rr in response.answer[0]] == \
            [f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"]
        assert response.answer[0].rdtype == dns.rdatatype.A
    assert server.query(f"host{HOSTS}.big.example.", "A").rcode() == dns.rcode.NXDOMAIN


@pytest.mark.parametrize("options", [(), ("--huge-pages",)], ids=["default", "said"])
def test_large_data_goes_to_huge_pages_where_the_kernel_allows(large_set, options):
    binary, size = large_set
    assert size >= HUGE_PAGE
    server = Server(binary, *options)
    try:
        assert server.query("host0.big.example.", "A").rcode() == dns.rcode.NOERROR
        message = next_message(server, timeout=2)
        if thp_mode() in ("always", "madvise"):
            assert message == f"the zone data ({size >> 20} MiB) is on huge pages"
        else:  # no THP in this kernel, or `never`: the data stays in the binary's mapping
            assert message is None
        assert_answers(server)
    finally:
        server.stop()


def test_the_copy_waits_for_the_first_answer(large_set):
    """A cold start reads the pages a lookup needs from the disk: the copy, which reads the
    whole data, begins once the workers have answered, so that the first answers do not
    wait behind its reads. A server stopped before it answered stops without it."""
    if thp_mode() not in ("always", "madvise"):
        pytest.skip("no transparent huge pages here: the data stays in the binary's mapping")
    binary, size = large_set
    server = Server(binary, "--threads", "1")
    try:
        assert next_message(server, timeout=1) is None
        assert server.query("host1.big.example.", "A").rcode() == dns.rcode.NOERROR
        assert next_message(server, timeout=5) == \
            f"the zone data ({size >> 20} MiB) is on huge pages"
    finally:
        server.stop()
    idle = Server(binary, "--threads", "1")
    idle.stop()
    assert idle.process.returncode == 0


def test_with_no_huge_pages_the_data_stays_in_place(large_set):
    binary, _ = large_set
    server = Server(binary, "--no-huge-pages")
    try:
        assert next_message(server, timeout=1) is None
        assert_answers(server)
    finally:
        server.stop()




def data_mapping(pid: int, binary: Path) -> list[str]:
    """The lines of /proc/PID/smaps that describe the mapping of the binary's zone data (the
    section at zb_data's address)."""
    symbols = subprocess.run(["nm", str(binary)], capture_output=True, text=True,
                             check=True).stdout
    address = int(re.search(r"^([0-9a-f]+) \w zb_data$", symbols, re.M).group(1), 16)
    smaps = Path(f"/proc/{pid}/smaps").read_text().splitlines()
    if int.from_bytes(binary.read_bytes()[16:18], "little") == 3:  # ET_DYN: a PIE (sanitized)
        loaded = next(line for line in smaps if line.endswith(str(binary.resolve())))
        address += int(loaded.split("-")[0], 16)
    starts = [i for i, line in enumerate(smaps) if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line)]
    for i, end in zip(starts, starts[1:] + [len(smaps)]):
        low, high = (int(x, 16) for x in smaps[i].split()[0].split("-"))
        if low <= address < high:
            return smaps[i:end]
    raise AssertionError(f"no mapping holds zb_data at {address:#x}")


def data_rss_kib(pid: int, binary: Path) -> int:
    """Resident KiB of the binary's own mapping of the zone data: what the process reads of
    it there."""
    rss = next(line for line in data_mapping(pid, binary) if line.startswith("Rss:"))
    return int(rss.split()[1])


def reads_pages_alone(pid: int, binary: Path) -> bool:
    """Whether a page fault on the data's mapping reads that page alone, without the disk's
    read-around (madvise's MADV_RANDOM: `rr` among smaps' VmFlags)."""
    flags = next(line for line in data_mapping(pid, binary) if line.startswith("VmFlags:"))
    return "rr" in flags.split()[1:]


def test_the_data_is_read_a_page_at_a_time_until_the_first_answer(large_set):
    """A cold start's lookups fault on a few pages spread over the data: each reads its page
    alone (not the disk's read-around, up to 8 MiB), until the server has answered; data
    left in the binary's mapping then gets the read-around back, as the server goes on to
    read it throughout."""
    binary, _ = large_set
    server = Server(binary, "--no-huge-pages", "--threads", "1")
    try:
        pid = server.process.pid
        assert reads_pages_alone(pid, binary)
        time.sleep(0.2)  # the thread that gives the read-around back waits for an answer
        assert reads_pages_alone(pid, binary)
        assert server.query("host1.big.example.", "A").rcode() == dns.rcode.NOERROR
        deadline = time.monotonic() + 2  # it looks at the workers' counters every 64 ms
        while reads_pages_alone(pid, binary) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not reads_pages_alone(pid, binary)
        assert_answers(server)
    finally:
        server.stop()


def test_small_data_stays_in_place_and_is_read_as_the_disk_reads(testset_binary):
    """Data under 2 MiB is too small for a huge page and costs a first lookup a few reads
    either way: no copy, no page at a time, and no thread beside the worker."""
    server = Server(testset_binary, "--threads", "1")
    try:
        assert not reads_pages_alone(server.process.pid, testset_binary)
        assert len(list(Path(f"/proc/{server.process.pid}/task").iterdir())) == 1
        assert next_message(server, timeout=1) is None
        assert server.query("www.example.", "A").rcode() == dns.rcode.NOERROR
    finally:
        server.stop()


def test_the_workers_answer_from_the_copy_once_it_is_made(large_set):
    """The server answers from the binary's mapping at once and moves to the copy behind the
    workers' backs: once it says the data is on huge pages, answering thousands of names
    reads nothing more of the binary's mapping, whose pages the copy gave back."""
    if thp_mode() not in ("always", "madvise"):
        pytest.skip("no transparent huge pages here: the data stays in the binary's mapping")
    binary, size = large_set
    server = Server(binary, "--threads", "1")  # one worker: one round to move in
    try:
        server.query("host1.big.example.", "A")  # the answer the copy waits for
        assert next_message(server, timeout=5) == \
            f"the zone data ({size >> 20} MiB) is on huge pages"
        server.query("host0.big.example.", "A")  # the round in which the worker moves
        before = data_rss_kib(server.process.pid, binary)
        for i in range(0, HOSTS, 12):  # some 2,000 names over the whole data
            assert server.query(f"host{i}.big.example.", "A").rcode() == dns.rcode.NOERROR
        after = data_rss_kib(server.process.pid, binary)
        # Served from the copy: from the binary's mapping, a lookup's few page faults each
        # map 64 KiB around them (the kernel's fault-around), and 2,000 would map most of it.
        assert after == before, (before, after)
        assert before < (size >> 10) // 4, before  # the copy gave the file's pages back
        assert_answers(server)
    finally:
        server.stop()
