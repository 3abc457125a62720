"""How `zonebake follow` answers NOTIFY messages (compiler/commands/notify.py; RFC 1996, RFC
8945), message by message: what goes back, byte for byte where it matters, and which zone (if
any) its primary is asked about."""

from __future__ import annotations

import struct
import time

import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.tsig
import pytest

from zonebake.commands.notify import Notifies
from zonebake.config import Primary, TsigKey, ZoneSetConfig, ZoneSource

KEY = dns.name.from_text("xfr.key.")
SECRET = b"a secret of the primary"
SIGNED = dns.name.from_text("signed.test.")
PLAIN = dns.name.from_text("plain.test.")
PRIMARY = "192.0.2.1#53000"


def rules() -> Notifies:
    key = TsigKey("hmac-sha256", KEY, SECRET)
    zones = (ZoneSource(SIGNED.to_text(), None, "signed", primary=Primary("192.0.2.1", 53, key)),
             ZoneSource(PLAIN.to_text(), None, "plain", primary=Primary("2001:db8::1", 53)),
             ZoneSource("file.test.", None, "file"))
    return Notifies(ZoneSetConfig(zones))


def notify(origin: dns.name.Name, key: dns.tsig.Key | None = None, rdtype: str = "SOA",
           opcode: int = dns.opcode.NOTIFY) -> dns.message.Message:
    message = dns.message.make_query(origin, rdtype, use_edns=False)
    message.flags = dns.flags.AA | dns.opcode.to_flags(opcode)
    if key is not None:
        message.use_tsig(key)
    return message


def right_key() -> dns.tsig.Key:
    return dns.tsig.Key(KEY, SECRET, "hmac-sha256")


def test_a_notify_from_the_primary_with_its_key_is_answered_signed_and_taken():
    sent = notify(SIGNED, right_key())
    verdict = rules().answer(sent.to_wire(), PRIMARY)
    assert verdict.zone.origin == SIGNED
    assert verdict.says == "NOTIFY for signed.test. from 192.0.2.1#53000: accepted"
    answer = dns.message.from_wire(verdict.reply, keyring=right_key(), request_mac=sent.mac)
    assert answer.id == sent.id and answer.opcode() == dns.opcode.NOTIFY
    assert answer.rcode() == dns.rcode.NOERROR
    assert answer.flags & (dns.flags.QR | dns.flags.AA | dns.flags.RD) == \
        dns.flags.QR | dns.flags.AA
    assert answer.question == sent.question and answer.had_tsig


def test_a_zone_without_a_key_takes_an_unsigned_notify_from_its_primary():
    sent = notify(PLAIN)
    verdict = rules().answer(sent.to_wire(), "2001:db8::1#4000")
    assert verdict.zone.origin == PLAIN
    answer = dns.message.from_wire(verdict.reply)
    assert (answer.rcode(), answer.tsig) == (dns.rcode.NOERROR, None)


@pytest.mark.parametrize("origin,key,source,rcode,says", [
    (SIGNED, None, PRIMARY, dns.rcode.REFUSED, "not signed with its key xfr.key.; REFUSED"),
    (SIGNED, right_key(), "192.0.2.2#53", dns.rcode.REFUSED,
     "not its primary 192.0.2.1:53; REFUSED"),
    (PLAIN, None, PRIMARY, dns.rcode.REFUSED, "not its primary [2001:db8::1]:53; REFUSED"),
    (dns.name.from_text("file.test."), right_key(), PRIMARY, dns.rcode.NOTAUTH,
     "not a zone taken from a primary; NOTAUTH"),
    (dns.name.from_text("other.test."), None, PRIMARY, dns.rcode.NOTAUTH,
     "not a zone taken from a primary; NOTAUTH"),
])
def test_a_notify_not_to_be_taken_changes_nothing(origin, key, source, rcode, says):
    sent = notify(origin, key)
    verdict = rules().answer(sent.to_wire(), source)
    assert verdict.zone is None
    assert verdict.says == f"NOTIFY for {origin} from {source}: {says}"
    keyring = key if key is not None else False
    answer = dns.message.from_wire(verdict.reply, keyring=keyring,
                                   request_mac=sent.mac if key else b"")
    assert (answer.id, answer.rcode(), answer.opcode()) == (sent.id, rcode, dns.opcode.NOTIFY)
    assert answer.question == sent.question


@pytest.mark.parametrize("key,error", [
    (dns.tsig.Key(KEY, b"not the secret", "hmac-sha256"), dns.rcode.BADSIG),
    (dns.tsig.Key("other.key.", SECRET, "hmac-sha256"), dns.rcode.BADKEY),
])
def test_a_bad_signature_is_notauth_with_the_tsig_error_unsigned(key, error):
    sent = notify(SIGNED, key)
    verdict = rules().answer(sent.to_wire(), PRIMARY)
    assert verdict.zone is None
    answer = dns.message.from_wire(verdict.reply, keyring=False)
    assert (answer.id, answer.rcode()) == (sent.id, dns.rcode.NOTAUTH)
    (tsig,) = answer.tsig
    assert answer.tsig.name == key.name
    assert (tsig.error, tsig.mac, tsig.original_id, tsig.algorithm) == \
        (error, b"", sent.id, dns.name.from_text("hmac-sha256."))
    assert tsig.time_signed == sent.tsig[0].time_signed


def test_a_signature_out_of_its_time_window_is_badtime(monkeypatch):
    late = int(time.time()) - 3600
    monkeypatch.setattr(time, "time", lambda: late)
    wire = notify(SIGNED, right_key()).to_wire()
    monkeypatch.undo()
    answer = dns.message.from_wire(rules().answer(wire, PRIMARY).reply, keyring=False)
    (tsig,) = answer.tsig
    assert (answer.rcode(), tsig.error) == (dns.rcode.NOTAUTH, dns.rcode.BADTIME)
    # RFC 8945 §5.2.3: the server's time in Other Data.
    assert abs(int.from_bytes(tsig.other, "big") - time.time()) < 5


def test_what_is_no_notify_is_answered_as_the_rfcs_say():
    query = notify(SIGNED, opcode=dns.opcode.QUERY).to_wire()
    reply = rules().answer(query, PRIMARY).reply
    assert reply == query[:2] + struct.pack("!HHHHH", 0x8000 | dns.rcode.NOTIMP, 0, 0, 0, 0)
    wrong_type = notify(SIGNED, rdtype="A")
    answer = dns.message.from_wire(rules().answer(wrong_type.to_wire(), PRIMARY).reply)
    assert answer.rcode() == dns.rcode.FORMERR and answer.opcode() == dns.opcode.NOTIFY
    garbage = b"\x12\x34\x20\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07"
    assert rules().answer(garbage, PRIMARY).reply == \
        b"\x12\x34" + struct.pack("!HHHHH", 0xA000 | dns.rcode.FORMERR, 0, 0, 0, 0)
    response = bytearray(notify(SIGNED).to_wire())
    response[2] |= 0x80
    for dropped in (bytes(response), b"\x12\x34\x20"):
        verdict = rules().answer(dropped, PRIMARY)
        assert (verdict.reply, verdict.zone) == (None, None)
