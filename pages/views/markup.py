"""Grader messages as safe Markdown: the grader's own formatting, and learner text as nothing but text.

Grader messages are Markdown on purpose (`code`, **strong**, *emphasis*), and they quote what the learner
controls: exception text, output keys, names, values. ``grader.records.learner`` marks those quotations.
``md`` keeps exactly three constructs of the grader's own text (code spans, strong, emphasis) and makes every
other character literal; marked learner text always becomes (or joins) a code span, whose fence is made
longer than any run of backticks in it, so it shows exactly as the program produced it. So an unmatched backtick, a link, an image, HTML, math or a
Streamlit directive in learner text (or in an unmarked quotation a check forgot to mark) shows as typed,
and can neither fetch nor run anything.
"""
from __future__ import annotations

import re
from typing import Any

from grader.records import LEARNER_CLOSE, LEARNER_OPEN, unmarked

_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character: CommonMark lets each be escaped
_QUOTED = re.compile(f"{LEARNER_OPEN}(.*?){LEARNER_CLOSE}", re.S)
_SLOT = re.compile("\x00(\\d+)\x00")
_TOKENS = [
    ("code", re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)),
    ("strong", re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.S)),
    ("em", re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", re.S)),
]


def plain(text: Any) -> str:
    """``text`` as Markdown that shows exactly these characters (learner marks dropped)."""
    return _PUNCT.sub(r"\\\1", unmarked(str(text)).replace("\x00", ""))


def md(message: Any) -> str:
    """A grader message as Markdown: its code spans, strong and emphasis kept, everything else literal."""
    quoted: list[str] = []

    def slot(m: re.Match) -> str:
        quoted.append(m.group(1))
        return f"\x00{len(quoted) - 1}\x00"
    text = _QUOTED.sub(slot, str(message).replace("\x00", ""))
    text = text.replace(LEARNER_OPEN, "").replace(LEARNER_CLOSE, "")  # a stray mark is no mark
    return _render(text, quoted)


def _render(text: str, quoted: list[str]) -> str:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        found = [(m.start(), kind, m) for kind, rx in _TOKENS if (m := rx.search(text, pos))]
        if not found:
            break
        start, kind, m = min(found, key=lambda f: f[0])
        out.append(_literal(text[pos:start], quoted))
        if kind == "code":
            out.append(code_span(_SLOT.sub(lambda s: quoted[int(s.group(1))], m.group(2))))
        else:
            mark = "**" if kind == "strong" else "*"
            out.append(mark + _render(m.group(1), quoted) + mark)
        pos = m.end()
    out.append(_literal(text[pos:], quoted))
    return "".join(out)


def _literal(text: str, quoted: list[str]) -> str:
    """Grader prose escaped; learner text in it as a code span (the one Markdown construct inside which
    nothing is parsed: not even the bare URLs that GitHub-flavoured Markdown would otherwise link)."""
    return _SLOT.sub(lambda s: code_span(quoted[int(s.group(1))]) if quoted[int(s.group(1))] else "",
                     _PUNCT.sub(r"\\\1", text))


def code_span(content: str) -> str:
    """A Markdown code span showing ``content`` exactly, whatever backticks it holds."""
    content = content.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if content.startswith(("`", " ")) or content.endswith(("`", " ")) else ""
    return f"{fence}{pad}{content}{pad}{fence}"
