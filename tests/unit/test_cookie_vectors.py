"""DNS server cookies (runtime/query/cookies.c): SipHash-2-4 against its paper's vectors, server
cookies against RFC 9018 Appendix A, and what a returned cookie proves: its age window
(§4.3), renewal after half an hour, the address and secret it is bound to, and the memo of
known cookies, which must never let an expired or foreign one through."""

from __future__ import annotations

import subprocess

import pytest

from conftest import ROOT, c_harness

KEY = "000102030405060708090a0b0c0d0e0f"
SECRET = "e5e973e5a6b2a43f48e7dc849e37bfcf"  # RFC 9018 Appendix A.1-A.3
NONE, CLIENT, VALID = 0, 1, 2


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    return c_harness(tmp_path_factory, "cookie_vectors",
                     ROOT / "runtime" / "query" / "cookies.c")


def run(binary, lines: list[str]) -> list[str]:
    out = subprocess.run([str(binary)], input="".join(line + "\n" for line in lines),
                         capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:-1]


@pytest.mark.parametrize("message,digest", [
    ("-", "726fdb47dd0e0e31"),                                # the paper's Appendix A
    ("0001020304050607", "93f5f5799a932462"),
    ("000102030405060708090a0b0c0d0e", "a129ca6149be45e5"),
])
def test_siphash_2_4_vectors(binary, message, digest):
    assert run(binary, [f"siphash {KEY} {message}"]) == [digest]


@pytest.mark.parametrize("secret,client,ip,timestamp,cookie", [
    (SECRET, "2464c4abcf10c957", "198.51.100.100", 1559731985,
     "010000005cf79f111f8130c3eee29480"),  # A.1
    (SECRET, "2464c4abcf10c957", "198.51.100.100", 1559734385,
     "010000005cf7a871d4a564a1442aca77"),  # A.2
    (SECRET, "fc93fc62807ddb86", "203.0.113.203", 1559734700,
     "010000005cf7a9acf73a7810aca2381e"),  # A.3
    ("445536bcd2513298075a5d379663c962", "22681ab97d52c298",
     "2001:db8:220:1:59de:d0f4:8769:82b8", 1559741961,
     "010000005cf7c609a6bb79d16625507a"),  # A.4
])
def test_server_cookies_of_rfc_9018_appendix_a(binary, secret, client, ip, timestamp, cookie):
    assert run(binary, [f"make {secret} {client} {ip} {timestamp}"]) == [cookie]


A1 = "2464c4abcf10c957010000005cf79f111f8130c3eee29480"  # made at 1559731985
A1_MADE = 1559731985


def answer(binary, now, cookie, ip="198.51.100.100", secret=SECRET) -> tuple[int, str]:
    verdict, reply = run(binary, [f"answer {secret} {now} {ip} {cookie}"])[0].split()
    return int(verdict), reply


def test_a_client_cookie_alone_gets_a_new_server_cookie(binary):
    assert answer(binary, A1_MADE, "2464c4abcf10c957") == (CLIENT, A1)


@pytest.mark.parametrize("age", [0, 1, 1800, -300])
def test_a_fresh_cookie_comes_back_unchanged(binary, age):
    assert answer(binary, A1_MADE + age, A1) == (VALID, A1)


def test_a_cookie_over_half_an_hour_old_is_valid_and_renewed(binary):
    """A.2: 40 minutes later the client is answered with a new server cookie."""
    assert answer(binary, 1559734385, A1) == (
        VALID, "2464c4abcf10c957010000005cf7a871d4a564a1442aca77")


@pytest.mark.parametrize("age", [3601, -301, 100000])
def test_a_cookie_out_of_its_window_is_replaced(binary, age):
    verdict, reply = answer(binary, A1_MADE + age, A1)
    assert verdict == CLIENT and reply[:16] == A1[:16] and reply != A1


def test_the_hour_is_the_last_second_it_holds(binary):
    assert answer(binary, A1_MADE + 3600, A1)[0] == VALID


def test_reserved_octets_the_client_sent_are_hashed_as_sent(binary):
    """A.3: the client's stale cookie has reserved octets set; at the moment it was made it
    is valid, and 1 h 52 min later the server makes the new one of A.3."""
    stale = "fc93fc62807ddb8601abcdef5cf78f71a314227b6679ebf5"
    assert answer(binary, 0x5cf78f71, stale, ip="203.0.113.203") == (VALID, stale)
    assert answer(binary, 1559734700, stale, ip="203.0.113.203") == (
        CLIENT, "fc93fc62807ddb86010000005cf7a9acf73a7810aca2381e")


def test_a_cookie_of_another_secret_is_replaced(binary):
    """A.4: the cookie the old secret made is not valid under the new one."""
    old = "22681ab97d52c298010000005cf7c57926556bd0934c72f8"
    ip = "2001:db8:220:1:59de:d0f4:8769:82b8"
    assert answer(binary, 1559741961, old, ip=ip, secret="dd3bdf9344b678b185a6f5cb60fca715") \
        == (VALID, old)
    assert answer(binary, 1559741961, old, ip=ip, secret="445536bcd2513298075a5d379663c962") \
        == (CLIENT, "22681ab97d52c298010000005cf7c609a6bb79d16625507a")


def test_the_memo_never_lets_an_expired_or_foreign_cookie_through(binary):
    """One process, one memo: the cookie is known from the first line, and still each line's
    own clock and address decide."""
    lines = [f"answer {SECRET} {now} {ip} {A1}" for now, ip in [
        (A1_MADE, "198.51.100.100"),          # verified: now in the memo
        (A1_MADE + 10, "198.51.100.100"),     # from the memo
        (A1_MADE + 3601, "198.51.100.100"),   # in the memo, but expired
        (A1_MADE + 10, "198.51.100.101"),     # in the memo, but for another address
        (A1_MADE + 20, "198.51.100.100"),     # still known for its own
    ]]
    verdicts = [int(line.split()[0]) for line in run(binary, lines)]
    assert verdicts == [VALID, VALID, CLIENT, CLIENT, VALID]


@pytest.mark.parametrize("tampered", [
    A1[:-2] + "81",                              # the hash
    A1[:16] + "02" + A1[18:],                    # version 2 is not ours
    "2464c4abcf10c958" + A1[16:],                # another client cookie
])
def test_a_tampered_cookie_is_replaced(binary, tampered):
    assert answer(binary, A1_MADE, tampered) == (CLIENT, tampered[:16] + answer(
        binary, A1_MADE, tampered[:16])[1][16:])
