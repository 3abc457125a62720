"""Log lines to the journal (issue 18): when $JOURNAL_STREAM names stderr's device and inode,
as systemd sets it (systemd.exec(5)), each line starts with its syslog priority, `<N>`, which
journald reads (sd-daemon(3)), and carries no time stamp or pid of its own: journald adds
them. Here stderr is a file and JOURNAL_STREAM names it."""

from __future__ import annotations

import os
import resource
import subprocess
import time

from conftest import AS_ROOT, LOG_LINE

LONG = 5.0


def start(binary, log, *args, limit_files: bool = False) -> subprocess.Popen:
    with open(log, "ab") as output:
        st = os.fstat(output.fileno())
        return subprocess.Popen(
            [str(binary), *AS_ROOT, *args], stderr=output,
            env={**os.environ, "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"},
            preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)))
            if limit_files else None)


def lines_when(log, count: int) -> list[str]:
    deadline = time.monotonic() + LONG
    while time.monotonic() < deadline:
        lines = log.read_text().splitlines()
        if len(lines) >= count:
            return lines
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} lines: {log.read_text()!r}")


def test_lines_carry_their_priority_for_the_journal(testset_binary, tmp_path):
    log = tmp_path / "journal"
    # Two workers of 128 connections cannot have their descriptors under a limit of 64: a
    # warning after the start-up line.
    server = start(testset_binary, log, "--listen", "127.0.0.1:0", "--threads", "2",
                   limit_files=True)
    try:
        first, second = lines_when(log, 2)[:2]
        assert first.startswith("<6>info: serving example., example.net. on 127.0.0.1:")
        assert second.startswith("<4>warning: 64 file descriptors allowed (RLIMIT_NOFILE)")
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert log.read_text().splitlines()[-1] == "<6>info: stopped"


def test_an_error_that_stops_the_server_is_priority_3(testset_binary, tmp_path):
    log = tmp_path / "journal"
    server = start(testset_binary, log, "--listen", "192.0.2.1:53")  # not an address here
    assert server.wait(timeout=10) == 1
    # (The first line: a sanitized build may report what it had not freed at the exit.)
    assert log.read_text().splitlines()[0] == \
        "<3>error: 192.0.2.1:53: bind: Cannot assign requested address"


def test_without_the_journal_lines_keep_their_time_stamp(testset_binary, tmp_path):
    log = tmp_path / "log"
    with open(log, "ab") as output:
        server = subprocess.Popen([str(testset_binary), *AS_ROOT, "--listen", "127.0.0.1:0"],
                                  stderr=output, env={**os.environ, "JOURNAL_STREAM": "1:2"})
    try:
        [line] = lines_when(log, 1)[:1]
        logged = LOG_LINE.match(line)
        assert logged and int(logged.group(1)) == server.pid
        assert logged.group(2).startswith("serving ")
        assert line.split("]: ", 1)[1].startswith("info: serving ")
    finally:
        server.terminate()
        server.wait(timeout=10)
