"""Class codes, secret keys and learner tokens, and nicknames as text.

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


def nickname_key(nick: str) -> str:
    """What makes two nicknames the same one: case, width and spacing do not count (``Ana`` is ``ana``)."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", nick).casefold())
