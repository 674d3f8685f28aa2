"""Class codes, secret keys and learner tokens, and nicknames as text.

Two nicknames are the same one when they look the same on a projector: ``nickname_key`` compares them by
their confusable skeleton (Unicode TR39's data, from the maintained ``confusable-homoglyphs`` package) after
NFKC, case folding and removing every invisible character, so ``an\u200da`` and Cyrillic ``аna`` are ``ana``.

A class code is short and unambiguous to read off a projector (no 0/O, 1/I). The board's key and each
learner's token are secrets; only their SHA-256 digests are stored, so the database alone lets no one open
a board or post as a learner.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
MAX_NICKNAME = 40
"""Characters of a nickname kept (the text input allows no more; the server cuts whatever arrives)."""
MAX_CLASS_NAME = 80

_KEEP_FORMAT = {"\u200d"}  # the zero-width joiner inside emoji sequences; other format characters go
_SPACE = re.compile(r"\s+")


class BadNickname(ValueError):
    """A nickname with nothing visible in it."""


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: object) -> str:
    """A code as typed or linked (``k7qx-3m``, `` K7QX3M ``) in its stored form; '' if it cannot be one."""
    code = re.sub(r"[\s-]", "", str(text or "")).upper()
    return code if re.fullmatch(r"[A-Z0-9]{4,16}", code) else ""


def new_secret() -> str:
    return secrets.token_urlsafe(18)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def same_secret(secret: object, stored_digest: str) -> bool:
    return isinstance(secret, str) and bool(secret) and hmac.compare_digest(digest(secret), stored_digest)


def one_line(text: object, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters: control and bidirectional-override characters
    removed, runs of white space made one space, and never cut inside an emoji sequence's joiner."""
    out = []
    for ch in unicodedata.normalize("NFC", str(text or "")):
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Zl", "Zp") or ch.isspace():
            out.append(" ")
        elif (cat == "Cf" and ch not in _KEEP_FORMAT) or cat in ("Cs", "Co", "Cn"):
            continue
        else:
            out.append(ch)
    line = _SPACE.sub(" ", "".join(out)).strip()[:limit]
    return line.rstrip("\u200d").strip()


def clean_nickname(text: object) -> str:
    """The nickname as it is stored and shown (as text, always); raises ``BadNickname`` if nothing is left."""
    nick = one_line(text, MAX_NICKNAME)
    if not nick:
        raise BadNickname("Type a nickname: it is how your teacher sees you on the class board.")
    return nick


def visible(text: str) -> str:
    """``text`` without its invisible characters: format (zero-width joiner, direction marks...), controls,
    unassigned and private-use code points, spaces, and the other default-ignorable ones (variation
    selectors, the Hangul fillers, combining grapheme joiner)."""
    return "".join(ch for ch in text if not invisible(ch))


def invisible(ch: str) -> bool:
    cp = ord(ch)
    return (unicodedata.category(ch) in ("Cf", "Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp") or ch.isspace()
            or cp in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0) or 0xFE00 <= cp <= 0xFE0F
            or 0xE0100 <= cp <= 0xE01EF or 0x180B <= cp <= 0x180F)


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each single character of TR39's confusable data to one representative of its group (its ASCII member
    when the group has one, else its lowest code point): groups joined transitively, so the map is stable."""
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    def rank(c: str) -> tuple[bool, int]:
        return (not c.isascii(), ord(c))

    for ch, homoglyphs in confusables.confusables_data.items():
        if len(ch) != 1:
            continue
        for h in homoglyphs:
            other = h.get("c", "")
            if len(other) == 1:
                a, b = find(ch), find(other)
                if a != b:
                    keep, drop = (a, b) if rank(a) <= rank(b) else (b, a)
                    parent[drop] = keep
    return {c: find(c) for c in list(parent)}


def skeleton(text: str) -> str:
    """TR39's skeleton, as the confusable data's groups give it: every character by its group's prototype."""
    table = _prototypes()
    return "".join(table.get(ch, ch) for ch in text)


def nickname_key(nick: str) -> str:
    """What makes two nicknames the same one on the projector: case, width, spacing, invisible characters and
    look-alike letters from other scripts do not count (``Ana``, ``a n a``, ``an\u200da``, Cyrillic ``аna``)."""
    text = visible(unicodedata.normalize("NFKC", nick)).casefold()
    return unicodedata.normalize("NFKC", skeleton(unicodedata.normalize("NFD", text)))[:200]
