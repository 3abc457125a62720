"""When a set signed at build time is due to be built again (issue 41): the cache's rule
(signing.resign_at), the set's first re-sign (resigning.due), and the clock tests move
(clock.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from zonebake import clock
from zonebake.config import load_toml
from zonebake.dnssec import resigning, signing
from zonebake.errors import UsageError

DAY = 86400
BUILT = 1_800_000_000  # a build's time


def signed_set(tmp_path: Path) -> Path:
    """a. signed for 14 days (the default), b. for 4, c. not signed."""
    toml = tmp_path / "zonebake.toml"
    toml.write_text('[[zone]]\norigin = "a.test."\nfile = "a"\ndnssec = { keys = "k" }\n'
                    '[[zone]]\norigin = "B.test."\nfile = "b"\n'
                    'dnssec = { keys = "k", signature-validity = "4d" }\n'
                    '[[zone]]\norigin = "c.test."\nfile = "c"\n')
    return toml


def expiration(validity: int, built: int = BUILT) -> int:
    """A signature's expiration, made by a build at `built` (signing.manifest_lines)."""
    return built - signing.INCEPTION_BEFORE + validity


def test_a_re_sign_is_due_when_a_quarter_of_the_validity_has_passed():
    # Three quarters of 14 days left at the inception: 3.5 days after the build; then the
    # cache no longer gives the signature, so that a build then makes a new one.
    assert signing.resign_at(expiration(14 * DAY), 14 * DAY) == BUILT + 3 * DAY + DAY // 2 + 1
    assert signing.resign_at(expiration(DAY), DAY) == BUILT + DAY // 4 + 1


@pytest.mark.parametrize("validity", [DAY, 4 * DAY, 14 * DAY, 30 * DAY + 7])
def test_the_due_time_is_the_first_a_build_does_not_reuse_the_signature(validity):
    """The core's rule, as signer.c's cached_for applies it: reused while the signature has
    signing.reuse_left of its validity left at the build's inception."""
    expires = expiration(validity)

    def reused(build_time: int) -> bool:
        return expires - (build_time - signing.INCEPTION_BEFORE) >= signing.reuse_left(validity)

    due = signing.resign_at(expires, validity)
    assert reused(due - 1) and not reused(due)
    # Before the signature comes within a quarter of its validity of expiring.
    assert due < expires - validity // 4


def test_the_set_is_due_at_its_first_zones_time(tmp_path):
    config = load_toml(signed_set(tmp_path))
    a, b = expiration(14 * DAY), expiration(4 * DAY)
    due = resigning.due(config, {"a.test.": a, "b.test.": b, "c.test.": None})
    assert due == resigning.Due(signing.resign_at(b, 4 * DAY), "B.test.", b)
    assert due.at == BUILT + DAY + 1
    assert due.next() == ("next re-sign at 2027-01-16T08:00:01Z: B.test.'s first signature "
                          "expires at 2027-01-19T07:00:00Z")
    assert due.why() == ("B.test.'s first signature expires at 2027-01-19T07:00:00Z; a build "
                         "signs it again from 2027-01-16T08:00:01Z")
    # b. re-signed later: a. comes first.
    later = expiration(4 * DAY, BUILT + 3 * DAY)
    assert resigning.due(config, {"a.test.": a, "b.test.": later}).origin == "a.test."


def test_a_signed_zone_served_unsigned_is_due_at_once(tmp_path):
    config = load_toml(signed_set(tmp_path))
    due = resigning.due(config, {"a.test.": expiration(14 * DAY)})
    assert (due.at, due.origin, due.expires) == (0, "B.test.", None)
    assert due.why() == "B.test. is signed at build time but not served signed"


def test_a_set_signing_nothing_is_never_due(tmp_path):
    toml = tmp_path / "zonebake.toml"
    toml.write_text('[[zone]]\norigin = "c.test."\nfile = "c"\n')
    assert resigning.due(load_toml(toml), {"c.test.": None}) is None


def test_the_clock_moves_by_the_seconds_in_its_file(tmp_path, monkeypatch):
    skew = tmp_path / "clock"
    monkeypatch.setenv(clock.SKEW_FILE, str(skew))
    skew.write_text("864000\n")
    # The build signs by it (SOURCE_DATE_EPOCH unset).
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert abs(clock.now() - signing.build_time()[0]) <= 1
    assert abs(clock.now() - int(time.time()) - 864000) <= 1
    skew.write_text("")
    assert abs(clock.now() - int(time.time())) <= 1


@pytest.mark.parametrize("text", ["soon", "1.5", str(200 * 365 * DAY)])
def test_a_clock_file_that_says_no_number_of_seconds_is_refused(tmp_path, monkeypatch, text):
    skew = tmp_path / "clock"
    skew.write_text(text)
    monkeypatch.setenv(clock.SKEW_FILE, str(skew))
    with pytest.raises(UsageError, match=rf"^ZONEBAKE_CLOCK_FILE={skew}: expected the seconds "
                                         rf"to add to the clock"):
        clock.now()


def test_a_clock_file_that_cannot_be_read_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(clock.SKEW_FILE, str(tmp_path / "missing"))
    with pytest.raises(UsageError, match="missing: No such file or directory$"):
        clock.now()
