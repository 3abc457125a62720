"""What to compile: the zones of a set and the defaults baked into the server.

Read from `--zone ORIGIN=FILE` arguments or from a zonebake.toml file:

    [server]
    listen = ["127.0.0.1:5300"]        # an address without a port: 53
    minimal-responses = false          # true: no additional addresses in answers
    udp-size = 1232                    # EDNS payload size advertised and used
    identity = "ns1.example"           # NSID (RFC 5001), CH TXT id.server and hostname.bind
    version = "zonebake"               # CH TXT version.bind and version.server; none if unset
    tcp-idle-timeout = 10              # seconds
    tcp-max-connections = 128          # per worker
    tcp-max-connections-per-source = 32  # per worker, from one client address
    rrl-responses-per-second = 0       # rate limiting per client prefix and answer; 0: off
    rrl-slip = 2                       # every 2nd limited response goes out truncated
    rrl-ipv4-prefix = 24
    rrl-ipv6-prefix = 56
    cookie-secret = "0123456789abcdef0123456789abcdef"  # DNS cookies (random if unset)
    signature-warning = "7d"           # warn of signatures expiring sooner (s, m, h, d, w)
    threads = 4                        # the server's --threads, --user, --control and
    user = "zonebake"                  # --metrics when its command line gives none
    control = "/run/zonebake/control"
    metrics = "127.0.0.1:9153"
    xdp = ["eth0", "eth1@5300"]        # the server's --xdp: UDP over AF_XDP (port 53 unless @)
    xdp-optional = false               # true: serve on the sockets alone where XDP fails

    [[zone]]
    origin = "example.com."
    file = "zones/example.com.zone"    # relative to the TOML file's directory
    # Sign it at build time (optional): the key pairs' directory (zonebake keygen), the
    # denial of existence, and how long each signature is valid from one hour before the
    # build (SOURCE_DATE_EPOCH, when set, is the build's time).
    dnssec = { keys = "keys", denial = "nsec3", nsec3-opt-out = false, signature-validity = "14d" }
    # Or transferred from a primary (optional) into `file` when the primary has a newer
    # serial (transfer.py), with a TSIG key (RFC 8945) as BIND and Knot write them.
    primary = "192.0.2.1:53"
    tsig = "hmac-sha256:xfr-key.:c2VjcmV0IHNlY3JldCBzZWNyZXQ="
"""

from __future__ import annotations

import base64
import binascii
import functools
import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError

if TYPE_CHECKING:
    import dns.name

DEFAULT_LISTEN = ("127.0.0.1:5300",)


@dataclass(frozen=True)
class SigningPolicy:
    """How the build signs a zone (issue 17): with every key pair of `keys` for its origin."""

    keys: Path
    denial: str = "nsec3"  # or "nsec"
    nsec3_opt_out: bool = False  # insecure delegations left out of the chain (RFC 5155 §6)
    signature_validity: int = 14 * 86400  # seconds, from the inception


# RFC 8945 §6 (and RFC 4635): the HMAC algorithms a TSIG key may name; hmac-md5 left out.
TSIG_ALGORITHMS = ("hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512")


@dataclass(frozen=True)
class TsigKey:
    algorithm: str  # one of TSIG_ALGORITHMS
    name: dns.name.Name
    secret: bytes


@dataclass(frozen=True)
class Primary:
    """Where a zone is transferred from (issue 18), and the key its transfers and NOTIFY
    messages are signed with."""

    address: str  # as ipaddress writes it
    port: int
    tsig: TsigKey | None = None

    def __str__(self) -> str:
        return f"[{self.address}]:{self.port}" if ":" in self.address \
            else f"{self.address}:{self.port}"


@dataclass(frozen=True)
class ZoneSource:
    origin_text: str  # as dnspython writes the name (parse_origin)
    path: Path  # where to open the file
    display: str  # how to name the file in messages: as the user wrote it
    dnssec: SigningPolicy | None = None
    primary: Primary | None = None

    @functools.cached_property
    def origin(self) -> dns.name.Name:
        """The origin as dnspython's Name, for the parts that use dnspython (the reader of
        the forms the core leaves, transfers, keys). Made on first use: a build whose zones
        the core reads does not import dnspython, a third of its start-up."""
        import dns.name
        return dns.name.from_text(self.origin_text)


@dataclass(frozen=True)
class ServerDefaults:
    """Settings compiled into the binary; command-line options of the server override them."""

    listen: tuple[str, ...] = DEFAULT_LISTEN
    # No addresses of NS, MX and SRV targets in the additional section of answers (referral
    # glue is still sent), as BIND's and Knot's option of the same name.
    minimal_responses: bool = False
    # The EDNS payload size advertised, and the most sent over UDP (RFC 6891 §6.2.5; 1232
    # is the DNS Flag Day 2020 value: no IP fragmentation on common paths).
    udp_size: int = 1232
    # Returned to NSID requests (RFC 5001) and to CH TXT id.server and hostname.bind; empty:
    # none (and those get REFUSED).
    identity: str = ""
    # Returned to CH TXT version.bind and version.server; empty: hidden (REFUSED).
    version: str = ""
    tcp_idle_timeout: int = 10  # seconds a TCP connection may stay silent (RFC 7766 §6.2.3)
    # Per worker; an idle one (nothing half read or waiting to be sent; quiet longest) is
    # closed for a new one.
    tcp_max_connections: int = 128
    # Per worker, from one client address: one of its own makes way for its new one, so that a
    # single client cannot push every other one out.
    tcp_max_connections_per_source: int = 32
    # Response rate limiting (BIND's, NSD's, Knot's): UDP responses a second per client
    # prefix and answer; 0: off. Every rrl_slip-th limited one goes out truncated.
    rrl_responses_per_second: int = 0
    rrl_slip: int = 2
    rrl_ipv4_prefix: int = 24
    rrl_ipv6_prefix: int = 56
    # The SipHash key of DNS server cookies (RFC 9018), 16 octets; empty: random at start-up
    # (and handed on at a swap). Servers behind one anycast address share one.
    cookie_secret: bytes = b""
    # The server's --user, --control, --metrics and --threads when it is given none; empty
    # (0): none (one worker per CPU).
    user: str = ""
    control: str = ""
    metrics: str = ""
    threads: int = 0
    # The server's --xdp interfaces (IFACE or IFACE@PORT) and --xdp-optional when its command
    # line gives none.
    xdp: tuple[str, ...] = ()
    xdp_optional: bool = False
    # Seconds: a signature of a pre-signed zone expiring sooner is worth a warning at build
    # time (one that has expired is an error; a warning with --lenient).
    signature_warning: int = 7 * 86400


@dataclass(frozen=True)
class ZoneSetConfig:
    zones: tuple[ZoneSource, ...]
    server: ServerDefaults = field(default_factory=ServerDefaults)


# Letters, digits, '-', '_' and '*' in non-empty labels; the root's dot at the end or not (a
# name without is relative to the root, as dnspython and the peers take an origin).
_PLAIN = re.compile(r"(?:[A-Za-z0-9_*-]+\.)*[A-Za-z0-9_*-]+\.?")
MAX_LABEL, MAX_NAME = 63, 255  # octets (RFC 1035 §2.3.4), the name's in its wire form


def parse_origin(text: str, where: str) -> str:
    """The origin as dnspython writes it (Name.to_text). A plain name within the lengths is
    that already, with the root's dot, and is taken without dnspython: 10,000 zones are read
    a tenth of a second faster, and a build of such zones does not import it. Any other is
    read by dnspython, which also says why a bad one is refused."""
    if _PLAIN.fullmatch(text):
        absolute = text if text.endswith(".") else text + "."
        if len(absolute) + 1 <= MAX_NAME and \
                all(len(label) <= MAX_LABEL for label in absolute.split(".")):
            return absolute
    import dns.name
    try:
        return dns.name.from_text(text).to_text()
    except Exception as exc:  # dnspython raises several types for bad names
        raise UsageError(f"{where}: bad zone origin {text!r}: {exc}") from None


DNS_PORT = 53  # RFC 1035 §4.2: where an address names no port


def parse_listen(text: str, where: str) -> str:
    """Check an `ADDRESS:PORT` or `[IPV6]:PORT` listen address, or one without a port (53,
    as NSD and Knot take it); return it with its port."""
    try:
        bare = ipaddress.ip_address(text.removeprefix("[").removesuffix("]"))
    except ValueError:
        bare = None
    # IPv6 only in brackets: in "::1:53" the port could not be told from the address.
    if bare is not None and (bare.version == 4) != text.startswith("["):
        return f"{bare}:{DNS_PORT}" if bare.version == 4 else f"[{bare}]:{DNS_PORT}"
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    try:
        if not sep:
            raise ValueError("expected ADDRESS:PORT or [IPV6]:PORT")
        address = ipaddress.ip_address(host)
        if text.startswith("[") != (address.version == 6):
            raise ValueError("IPv6 addresses are written in brackets: [::1]:53")
        if not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f"bad port {port!r}")
    except ValueError as exc:
        raise UsageError(f"{where}: bad listen address {text!r}: {exc}") from None
    return text


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(value: object, where: str) -> int:
    """Seconds from a number of seconds or a text such as "7d" or "1w2d" (BIND's units)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = value.strip().lower() if isinstance(value, str) else ""
    parts = re.fullmatch(r"(?:\d+[smhdw])+", text)
    if parts is None:
        raise UsageError(f"{where}: expected seconds or a duration such as \"7d\", "
                         f"not {value!r}")
    return sum(int(n) * _UNITS[unit] for n, unit in re.findall(r"(\d+)([smhdw])", text))


# The keys zonebake.toml accepts, table by table: its man page, zonebake.toml(5), documents
# each (tests/docs/test_documented.py holds them to it).
TABLES = ("server", "zone")
ZONE_KEYS = ("origin", "file", "dnssec", "primary", "tsig")
DNSSEC_KEYS = ("keys", "denial", "nsec3-opt-out", "signature-validity")
# [server]: the plain settings, each key's field, type and bounds (listen is read apart).
_SERVER_SETTINGS = {
    "listen": None,
    "minimal-responses": ("minimal_responses", bool, None),
    "udp-size": ("udp_size", int, (512, 65535)),
    "identity": ("identity", str, None),
    "version": ("version", str, None),
    "tcp-idle-timeout": ("tcp_idle_timeout", int, (1, 86400)),
    "tcp-max-connections": ("tcp_max_connections", int, (1, 65536)),
    "tcp-max-connections-per-source": ("tcp_max_connections_per_source", int, (1, 65536)),
    "rrl-responses-per-second": ("rrl_responses_per_second", int, (0, 1000000)),
    "rrl-slip": ("rrl_slip", int, (0, 10)),
    "rrl-ipv4-prefix": ("rrl_ipv4_prefix", int, (1, 32)),
    "rrl-ipv6-prefix": ("rrl_ipv6_prefix", int, (1, 128)),
    "user": ("user", str, None),
    "control": ("control", str, None),
    "metrics": ("metrics", str, None),
    "threads": ("threads", int, (1, 1024)),
    "xdp-optional": ("xdp_optional", bool, None),
}
SERVER_KEYS = (*_SERVER_SETTINGS, "cookie-secret", "signature-warning", "xdp")
# An interface's name as Linux takes it (IFNAMSIZ less the NUL; no '/', ':' or blank), and
# an optional UDP port.
_XDP_SPEC = re.compile(r"([^/:@\s]{1,15})(?:@([0-9]{1,5}))?")


def zones_from_args(specs: list[str]) -> ZoneSetConfig:
    zones = []
    for spec in specs:
        origin, sep, file = spec.partition("=")
        if not sep or not origin or not file:
            raise UsageError(f"--zone {spec!r}: expected ORIGIN=FILE")
        zones.append(ZoneSource(parse_origin(origin, "--zone"), Path(file), file))
    return _checked(ZoneSetConfig(tuple(zones)), "command line")


def load_toml(path: Path) -> ZoneSetConfig:
    from . import configcache  # here: a build given --zone does without it
    try:
        with open(path, "rb") as f:
            doc = configcache.document(f.read())
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from None
    except configcache.NotToml as exc:
        raise UsageError(f"{path}: {exc}") from None

    unknown = set(doc) - set(TABLES)
    if unknown:
        raise UsageError(f"{path}: unknown table(s): {', '.join(sorted(unknown))}")

    base = path.parent
    zones = []
    entries = doc.get("zone", [])
    if not isinstance(entries, list):
        raise UsageError(f"{path}: zones are written as [[zone]] tables")
    for i, entry in enumerate(entries, 1):
        where = f"{path}: zone #{i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("origin"), str) \
                or not isinstance(entry.get("file"), str):
            raise UsageError(f"{where}: needs origin = \"...\" and file = \"...\"")
        extra = set(entry) - set(ZONE_KEYS)
        if extra:
            raise UsageError(f"{where}: unknown key(s): {', '.join(sorted(extra))}")
        file = Path(entry["file"])
        zone_path = file if file.is_absolute() else base / file
        policy = (parse_signing(entry["dnssec"], base, f"{where}: dnssec")
                  if "dnssec" in entry else None)
        primary = parse_primary(entry, where) if "primary" in entry or "tsig" in entry else None
        zones.append(ZoneSource(parse_origin(entry["origin"], where), zone_path, str(zone_path),
                                policy, primary))

    server = doc.get("server", {})
    if not isinstance(server, dict):
        raise UsageError(f"{path}: [server] must be a table")
    extra = set(server) - set(SERVER_KEYS)
    if extra:
        raise UsageError(f"{path}: [server]: unknown key(s): {', '.join(sorted(extra))}")
    listen = server.get("listen", list(DEFAULT_LISTEN))
    if isinstance(listen, str):
        listen = [listen]
    if not isinstance(listen, list) or not listen or not all(isinstance(a, str) for a in listen):
        raise UsageError(f"{path}: [server] listen must be an address or a list of addresses")
    settings = {"listen": tuple(parse_listen(a, f"{path}: [server]") for a in listen)}
    if "cookie-secret" in server:
        settings["cookie_secret"] = parse_cookie_secret(server["cookie-secret"],
                                                        f"{path}: [server] cookie-secret")
    if "xdp" in server:
        settings["xdp"] = parse_xdp(server["xdp"], f"{path}: [server] xdp")
    if "signature-warning" in server:
        settings["signature_warning"] = parse_duration(
            server["signature-warning"], f"{path}: [server] signature-warning")
    for key, spec in _SERVER_SETTINGS.items():
        if spec is None or key not in server:
            continue
        field_name, kind, bounds = spec
        value = server[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UsageError(f"{path}: [server] {key} must be a {kind.__name__}")
        if bounds and not bounds[0] <= value <= bounds[1]:
            raise UsageError(f"{path}: [server] {key} must be from {bounds[0]} to {bounds[1]}")
        settings[field_name] = value
    if settings.get("metrics"):
        settings["metrics"] = parse_listen(settings["metrics"], f"{path}: [server] metrics")
    # Each is sent as one TXT character-string (and NSID option): at most 255 octets.
    for key in ("identity", "version"):
        if len(settings.get(key, "").encode()) > 255:
            raise UsageError(f"{path}: [server] {key} is longer than 255 octets")
    defaults = ServerDefaults(**settings)
    return _checked(ZoneSetConfig(tuple(zones), defaults), str(path))


def parse_xdp(value: object, where: str) -> tuple[str, ...]:
    """The [server] xdp list: interface names, each with an optional @PORT."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where} must be an interface or a list of interfaces")
    names = []
    for spec in value:
        match = _XDP_SPEC.fullmatch(spec)
        if not match or (match[2] and not 1 <= int(match[2]) <= 65535):
            raise UsageError(f"{where}: bad interface {spec!r}: expected a name of 1 to 15 "
                             "characters, and optionally @PORT (1 to 65535)")
        if match[1] in names:
            raise UsageError(f"{where}: {match[1]} is given twice")
        names.append(match[1])
    if len(value) > 64:
        raise UsageError(f"{where}: at most 64 interfaces")
    return tuple(value)


# Signatures valid for less than this would need a rebuild more often than CI runs.
MIN_VALIDITY = 86400


def parse_signing(table: object, base: Path, where: str) -> SigningPolicy:
    """A zone's `dnssec = { keys = "DIR", denial = "nsec" | "nsec3", nsec3-opt-out = false,
    signature-validity = "14d" }`; the directory relative to the TOML file's."""
    if not isinstance(table, dict) or not isinstance(table.get("keys"), str):
        raise UsageError(f"{where}: expected a table with keys = \"DIRECTORY\"")
    extra = set(table) - set(DNSSEC_KEYS)
    if extra:
        raise UsageError(f"{where}: unknown key(s): {', '.join(sorted(extra))}")
    denial = table.get("denial", "nsec3")
    if denial not in ("nsec", "nsec3"):
        raise UsageError(f"{where}: denial must be \"nsec\" or \"nsec3\", not {denial!r}")
    opt_out = table.get("nsec3-opt-out", False)
    if not isinstance(opt_out, bool):
        raise UsageError(f"{where}: nsec3-opt-out must be true or false")
    if opt_out and denial != "nsec3":
        raise UsageError(f"{where}: nsec3-opt-out needs denial = \"nsec3\"")
    validity = parse_duration(table.get("signature-validity", "14d"),
                              f"{where}: signature-validity")
    if validity < MIN_VALIDITY:
        raise UsageError(f"{where}: signature-validity must be at least a day ({MIN_VALIDITY} "
                         f"seconds)")
    keys = Path(table["keys"])
    return SigningPolicy(keys if keys.is_absolute() else base / keys, denial, opt_out, validity)


def parse_primary(entry: dict, where: str) -> Primary:
    """A zone's `primary = "ADDRESS:PORT"` (53 when no port is given) and optional
    `tsig = "ALGORITHM:KEYNAME:BASE64SECRET"`."""
    if not isinstance(entry.get("primary"), str):
        raise UsageError(f"{where}: tsig needs primary = \"ADDRESS:PORT\"" if "primary" not in
                         entry else f"{where}: primary must be a string, \"ADDRESS:PORT\"")
    text = parse_listen(entry["primary"], f"{where}: primary")
    host, _, port = text.rpartition(":")
    tsig = entry.get("tsig")
    if tsig is None:
        return Primary(host.strip("[]"), int(port))
    algorithm, _, rest = tsig.partition(":") if isinstance(tsig, str) else ("", "", "")
    name, _, secret = rest.rpartition(":")
    if algorithm.lower() not in TSIG_ALGORITHMS or not name or not secret:
        raise UsageError(f"{where}: tsig must be \"ALGORITHM:KEYNAME:BASE64SECRET\" with an "
                         f"ALGORITHM of {', '.join(TSIG_ALGORITHMS)}")
    try:
        key = base64.b64decode(secret, validate=True)
    except binascii.Error:
        raise UsageError(f"{where}: tsig: the secret is not base64") from None
    if not key:
        raise UsageError(f"{where}: tsig: the secret is empty")
    import dns.name
    try:
        keyname = dns.name.from_text(name)
    except Exception as exc:  # dnspython raises several types for bad names
        raise UsageError(f"{where}: tsig: bad key name {name!r}: {exc}") from None
    return Primary(host.strip("[]"), int(port), TsigKey(algorithm.lower(), keyname, key))


def parse_cookie_secret(value, where: str) -> bytes:
    """16 octets in 32 hexadecimal digits, as BIND's cookie-secret for SipHash-2-4."""
    if isinstance(value, str) and re.fullmatch(r"[0-9A-Fa-f]{32}", value):
        return bytes.fromhex(value)
    raise UsageError(f"{where} must be 32 hexadecimal digits (16 octets), "
                     f"e.g. from: openssl rand -hex 16")


def _checked(config: ZoneSetConfig, where: str) -> ZoneSetConfig:
    if not config.zones:
        raise UsageError(f"{where}: no zones given")
    seen = set()
    for zone in config.zones:
        # Lowercased, dnspython's text is its Name compared: only the letters A-Z are
        # written as themselves and fold (RFC 4343 §2), every other octet has one spelling.
        if zone.origin_text.lower() in seen:
            raise UsageError(f"{where}: zone {zone.origin_text} is given twice")
        seen.add(zone.origin_text.lower())
    # A NOTIFY names its key, not its zone's (follow.py): one name, one secret.
    keys: dict[dns.name.Name, TsigKey] = {}
    for zone in config.zones:
        key = zone.primary.tsig if zone.primary else None
        if key is not None and keys.setdefault(key.name, key) != key:
            raise UsageError(f"{where}: TSIG key {key.name} is given with two secrets or "
                             f"algorithms")
    return config
