"""Class codes, secret keys and learner tokens, and nicknames as text.

Two nicknames are the same one when they look the same on a projector: ``nickname_key`` compares them by
their full TR39 skeleton (``skeleton``: each character to its prototype, several characters where Unicode's
confusables.txt says so, ``m`` to ``rn``) after NFKC, case folding and removing every blank or invisible
character (``invisible``: U+2800 BRAILLE PATTERN BLANK and the Hangul fillers count as nothing), so
``an\u200da``, ``\u2800ana``, Cyrillic ``аna`` and ``ana`` are one name, and so are ``rnary`` and ``mary``.

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
    """The nickname as it is stored and shown (as text, always), without blank characters at either end;
    raises ``BadNickname`` if nothing visible is left."""
    nick = one_line(text, MAX_NICKNAME)
    start, end = 0, len(nick)
    while start < end and invisible(nick[start]) and nick[start] != "\u200d":
        start += 1
    while end > start and invisible(nick[end - 1]) and not _part_of_emoji(nick[end - 1]):
        end -= 1
    nick = nick[start:end]
    if not visible(nick):
        raise BadNickname("Type a nickname: it is how your teacher sees you on the class board.")
    return nick


def visible(text: str) -> str:
    """``text`` without its blank and invisible characters (``invisible``)."""
    return "".join(ch for ch in text if not invisible(ch))


_DEFAULT_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                      (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
                      (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                      (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
"""Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): characters a renderer draws as
nothing, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 among them."""
_BLANK_GLYPHS = frozenset({0x2800, 0x16FE4, 0x1D159, 0x2062, 0x2063, 0x2064, 0x3000, 0x1680, 0x2028, 0x2029})
"""Characters that are not default-ignorable yet draw a blank: BRAILLE PATTERN BLANK, KHITAN SMALL SCRIPT FILLER,
MUSICAL SYMBOL NULL NOTEHEAD, the invisible operators, the ideographic space and the like."""


def invisible(ch: str) -> bool:
    """Whether ``ch`` shows as nothing on a projector: a blank glyph, a space or line break, a control, a
    format character (zero-width joiner, direction marks...), a surrogate, an unassigned or private-use code
    point, or any other default-ignorable code point (variation selectors, the Hangul fillers, tags)."""
    cp = ord(ch)
    return (unicodedata.category(ch) in ("Cf", "Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp") or ch.isspace()
            or cp in _BLANK_GLYPHS or any(lo <= cp <= hi for lo, hi in _DEFAULT_IGNORABLE))


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """TR39's table: each confusable source character to its prototype (one character or several: ``m`` to
    ``rn``), read from the ``confusable-homoglyphs`` package's copy of Unicode's confusables.txt.

    The package keeps each line of the file both ways (the source under its prototype, the prototype under
    its source), so the direction is read back: a character listed under a string of several characters, or
    under a character that several sources share, is that one's source; of a pair that only name each other,
    the one the file lists first is the source, unless the other is part of a prototype of several characters.
    (Checked against Unicode 13's confusables.txt: the same table for all 6,307 sources both hold.)"""
    order: dict[str, int] = {}
    pairs: dict[str, list[str]] = {}
    for i, (key, listed) in enumerate(confusables.confusables_data.items()):
        key = _unmarked(key)  # the package wraps right-to-left text in left-to-right marks
        order.setdefault(key, i)
        mates = pairs.setdefault(key, [])
        for mate in (_unmarked(h.get("c", "")) for h in listed):
            if mate and mate not in mates:
                mates.append(mate)
    in_long = {ch for key in pairs if len(key) > 1 for ch in key}
    table: dict[str, str] = {}
    for key, mates in pairs.items():
        if len(key) != 1 or len(mates) != 1:
            continue
        target = mates[0]
        back = pairs.get(target, [])
        if len(target) > 1 or len(back) > 1 or target in in_long:
            table[key] = target
        elif key not in in_long and not (back == [key] and order[key] > order.get(target, -1)):
            table[key] = target
    return table


def _part_of_emoji(ch: str) -> bool:
    """Variation selectors and tag characters end emoji sequences (``❤️``, a subdivision flag): kept."""
    cp = ord(ch)
    return 0xFE00 <= cp <= 0xFE0F or 0xE0020 <= cp <= 0xE007F or 0xE0100 <= cp <= 0xE01EF


def _unmarked(text: str) -> str:
    return text.replace("\u200e", "").replace("\u200f", "")


def skeleton(text: str) -> str:
    """TR39's skeleton: NFD, every character replaced by its prototype (``_prototypes``), NFD again (repeated
    until nothing changes, which TR39's idempotent data reaches in one step)."""
    table = _prototypes()
    text = unicodedata.normalize("NFD", text)
    for _ in range(4):
        mapped = unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in text))
        if mapped == text:
            break
        text = mapped
    return text


def nickname_key(nick: str) -> str:
    """What makes two nicknames the same one on the projector: case, width, spacing, blank and invisible
    characters and look-alikes do not count (``Ana``, ``a n a``, ``an\u200da``, ``\u2800ana``, Cyrillic ``аna``;
    ``rnary`` and ``mary``)."""
    text = visible(unicodedata.normalize("NFKC", nick)).casefold()
    return unicodedata.normalize("NFKC", visible(skeleton(text)).casefold())[:200]
