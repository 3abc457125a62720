"""A zone set's TOML read as tomllib reads it, and for a large one (a hoster's 10,000 zones:
400 KB, 0.1 s of every build's 0.3-0.4 s) the document kept in this user's cache beside the
core's program (toolchain/cachehome.py), as JSON under a digest of the file's octets: the
next build of the same file loads that (5 ms) instead. Keyed by the octets themselves, not
the file's times, so an edit is never missed; one document is kept, the last one read."""

from __future__ import annotations

import hashlib
import json
import os
import tomllib

from .toolchain.cachehome import zonebake_cache

CACHED_FROM = 64 * 1024  # octets: a smaller file parses in a millisecond or two
CACHE_FILE = "config.json"


class NotToml(ValueError):
    """The file is not TOML: its message says where (tomllib's, or the first octet that is
    not UTF-8, which a TOML document is: TOML 1.0 §Spec)."""


def document(data: bytes) -> dict:
    """DATA, a TOML file's octets, as tomllib reads it (NotToml where it cannot)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotToml(f"not UTF-8 text (octet {exc.start + 1})") from None
    if len(data) < CACHED_FROM:
        return _parse(text)
    key = hashlib.blake2b(data, digest_size=16).hexdigest()
    home = zonebake_cache()
    path = os.path.join(home, CACHE_FILE) if home else None
    found = _cached(path, key) if path else None
    if found is not None:
        return found
    doc = _parse(text)
    if path:
        _keep(path, key, doc)
    return doc


def _parse(text: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise NotToml(str(exc)) from None


def _cached(path: str, key: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as file:
            kept = json.load(file)
    except (OSError, ValueError):  # none yet, or a damaged one: parsed again
        return None
    if not isinstance(kept, dict) or kept.get("key") != key or \
            not isinstance(kept.get("document"), dict):
        return None
    return kept["document"]


def _keep(path: str, key: str, doc: dict) -> None:
    """DOC under KEY, in place of the last one kept; nothing where it cannot be written or is
    not JSON (a TOML date, which no setting of zonebake's takes)."""
    try:
        text = json.dumps({"key": key, "document": doc}, allow_nan=False)
    except (TypeError, ValueError):
        return
    temporary = f"{path}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)  # whole or not at all, for builds running at once
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
