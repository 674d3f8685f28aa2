"""The README stays short and the documentation holds together: every relative link and image in
``README.md`` and ``docs/*.md`` points at a file that exists, every ``#anchor`` at a heading that exists
(GitHub's rule for a heading's anchor), and the README names every page of ``docs/`` and the test commands.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target), with an optional "title"; the text may hold one level of brackets
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def prose_lines(text: str) -> list[str]:
    """The file's lines outside fenced code blocks, with inline code spans blanked out."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else CODE_SPAN.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text without Markdown, lower case, punctuation other than
    '-' and '_' dropped, spaces as '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor the headings of a Markdown file get, duplicates numbered as GitHub does (-1, -2...)."""
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link and image in the file's prose."""
    found = []
    for number, line in enumerate(prose_lines(path.read_text(encoding="utf-8")), start=1):
        found += [(number, target) for target in LINK.findall(line)]
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``path`` whose file, or heading, does not exist, as 'file:line: target (why)'."""
    broken = []
    for number, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:...
            continue
        file_part, _, anchor = target.partition("#")
        where = f"{path.relative_to(root)}:{number}: {target}"
        destination = (path.parent / file_part).resolve() if file_part else path
        if not destination.exists():
            broken.append(f"{where} (no such file)")
            continue
        if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{where} (no heading with that anchor)")
    return broken


def test_the_readme_is_at_most_250_lines():
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move detail to a page of docs/"


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path):
    assert links(path) or path != README, "the README links to its pages"
    broken = broken_links(path)
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_readme_names_every_page_of_docs():
    readme = README.read_text(encoding="utf-8")
    assert DOCS, "docs/ holds the pages the README links to"
    missing = [p.name for p in DOCS if f"(docs/{p.name})" not in readme and f"(docs/{p.name}#" not in readme]
    assert missing == [], f"the README links to no docs/{missing}"


def test_the_readme_gives_the_test_commands():
    readme = README.read_text(encoding="utf-8")
    assert "python3 -m pytest" in readme
    assert '-m "not slow"' in readme


def test_the_checker_sees_a_broken_link_and_a_broken_anchor(tmp_path):
    (tmp_path / "a.md").write_text("# A page\n\n## Two words, and `code`\n\n## Two words, and code\n")
    page = tmp_path / "b.md"
    page.write_text(
        "[fine](a.md#two-words-and-code) [fine](a.md#two-words-and-code-1) [self](#here)\n"
        "# Here\n"
        "[gone](missing.md) [no anchor](a.md#nowhere) ![no image](x.png)\n"
        "`[in code](nowhere.md)`\n```\n[in a block](nowhere.md)\n```\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "b.md:3: missing.md (no such file)",
        "b.md:3: a.md#nowhere (no heading with that anchor)",
        "b.md:3: x.png (no such file)",
    ]


def test_slugs_follow_github():
    assert slug("Cost on a TPU, compiled ahead of time") == "cost-on-a-tpu-compiled-ahead-of-time"
    assert slug("`grader mutants`: the survivors") == "grader-mutants-the-survivors"
    assert slug("Warm workers: how a Run stays fast") == "warm-workers-how-a-run-stays-fast"
    assert slug("The pool's size, in [short](x.md)") == "the-pools-size-in-short"
    assert slug("JAXPLAY_POOL_SIZE and friends") == "jaxplay_pool_size-and-friends"


def test_grading_lists_every_row_and_whether_it_decides():
    """docs/grading.md's table of rows matches the problems: every row, advice or deciding, and no other."""
    import problems

    text = (ROOT / "docs" / "grading.md").read_text()
    listed = set(re.findall(r"^\| (.+?) \| `([a-z0-9-]+)` \| (advice|decides) \|$", text, re.M))
    want = {(p.title, r.id, "advice" if r.advice else "decides")
            for p in problems.registry().values() for r in p.requirements}
    assert listed == want, (sorted(want - listed), sorted(listed - want))
