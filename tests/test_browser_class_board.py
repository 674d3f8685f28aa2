"""The class board read from the back of the room (issue 42), in Chromium at 1920x1080 with a class of 30:
every learner's failing requirement is there in full at 20 px or more, no figure is cut, the join link never
breaks inside the class code, and the most common failure counts every learner failing it, in plain text.

The class is written straight into the store (its Runs' verdicts, not gradings: what the board reads), so
the test is about the board's drawing and takes the time of one server start."""
from __future__ import annotations

import datetime as dt

import pytest

from browser_helpers import ARTIFACTS, launch, start_server, stop_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECTOR = {"width": 1920, "height": 1080}
REMAT = "rematerialized-mlp-block"
DOTS, INSIDE, TANH = "checkpoint-dots-saveable", "checkpoint-inside-grad", "tanh-in-checkpoint"
NAMES = ["ana", "ben", "chloé", "dev", "eli", "fatima", "gus", "hana", "ivan", "jun", "kofi", "lea", "mo", "nika",
         "omar", "pia", "quinn", "rosa", "sam", "tariq", "uma", "vic", "wen", "xena", "yuki", "zara", "amir",
         "bea", "carl", "Maximiliana-Theodora"]


def fill_class(url: str) -> tuple[str, str, dict[str, tuple[str, ...]]]:
    """A class of 30 on the rematerialized MLP block: most fail one or two requirements (the longest ids
    side by side), some could not run, some are through, one took an hour. Returns (code, key, who fails
    what on their latest attempt)."""
    from classroom import ClassStore, Outcome
    store = ClassStore(url)
    info, key = store.start_class("JAX workshop, Monday", problem=REMAT)
    t0 = dt.datetime(2026, 3, 2, 9, 0, 0)
    failing: dict[str, tuple[str, ...]] = {}
    for i, name in enumerate(NAMES):
        member, _ = store.join(info.code, name)
        kind = i % 6

        def rec(verdict, passed, failed, failure, minutes, how="run"):
            store.record(member, Outcome(REMAT, how, verdict, passed, failed, failure, "# code", 1.0),
                         at=t0 + dt.timedelta(minutes=minutes))
        if kind in (0, 1):  # both checkpoint requirements: the two longest ids on one row
            rec("requirements_not_met", (TANH,), (INSIDE, DOTS), f"`{INSIDE}` not met: Wrap the block", i)
            failing[name] = (INSIDE, DOTS)
        elif kind == 2:
            rec("requirements_not_met", (INSIDE, TANH), (DOTS,), f"`{DOTS}` not met: Use dots_saveable", i)
            failing[name] = (DOTS,)
        elif kind == 3:
            rec("wrong_answer", (), (DOTS, INSIDE, TANH), "Wrong Answer: loss: got …, expected …", i)
            failing[name] = (DOTS, INSIDE, TANH)
        elif kind == 4:
            rec("syntax_error", (), (), "Syntax Error: invalid syntax (line …)", i)
        else:  # through: a Run first, then an accepted Submit 65 minutes later (the median reads "1 h 05 min")
            rec("requirements_not_met", (INSIDE, TANH), (DOTS,), f"`{DOTS}` not met: x", i)
            rec("accepted", (DOTS, INSIDE, TANH), (), "", i + 65, "submit")
    return info.code, key, failing


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    from playwright.sync_api import sync_playwright
    data = tmp_path_factory.mktemp("class-board")
    url_db = f"sqlite:///{data / 'classroom.sqlite3'}"
    code, key, failing = fill_class(url_db)
    proc, url, log = start_server("streamlit-class-board.log", env={"JAXPLAY_DATA": str(data / "data"),
                                                                     "JAXPLAY_DB": url_db})
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport=PROJECTOR)
            page.goto(f"{url}/board?class={code}&key={key}")
            page.locator("[class*='st-key-board-learner-']", has_text=NAMES[-1]).first.wait_for(timeout=180_000)
            page.wait_for_timeout(2500)  # a refresh or two: the board as it stays
            page.mouse.move(1, 1)
            page.screenshot(path=str(ARTIFACTS / "class-board-30-projector.png"))
            yield page, code, failing
            browser.close()
    finally:
        stop_server(proc, log)


def _clipped(page, selector: str) -> list[dict]:
    """Every element matching ``selector`` whose text is cut: wider than its box, ending in an ellipsis, or
    reaching past an ancestor that hides what overflows it."""
    return page.evaluate("""(sel) => {
      const out = [];
      for (const el of document.querySelectorAll(sel)) {
        const r = el.getBoundingClientRect();
        let cut = el.scrollWidth > el.clientWidth + 1 || getComputedStyle(el).textOverflow === "ellipsis";
        for (let a = el.parentElement; a && !cut; a = a.parentElement) {
          const st = getComputedStyle(a);
          if (st.overflowX === "visible" && st.overflowY === "visible") continue;
          const b = a.getBoundingClientRect();
          if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) cut = true;
        }
        if (cut) out.push({text: el.innerText, width: r.width, scroll: el.scrollWidth});
      }
      return out;
    }""", selector)


def test_every_failing_requirement_is_readable_in_full_at_20px_or_more(board):
    page, _, failing = board
    for name, ids in failing.items():
        row = page.locator("[class*='st-key-board-learner-']", has_text=name).first
        shown = row.locator(".jaxplay-fail-id")
        assert shown.all_inner_texts() == [f"✗ {i}" for i in ids], f"{name}'s row"
        for i in range(shown.count()):
            size = shown.nth(i).evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
            assert size >= 20, f"{name}: {shown.nth(i).inner_text()} at {size} px"
    assert _clipped(page, ".jaxplay-fail-id") == [], "no requirement's name cut"
    assert _clipped(page, ".jaxplay-row-head .jaxplay-nick") == [], "no nickname cut"
    rows = page.locator("[class*='st-key-board-learner-']")
    assert rows.count() == 30
    bottom = max(b["y"] + b["height"] for b in (rows.nth(i).bounding_box() for i in range(30)))
    assert bottom <= PROJECTOR["height"], f"the 30 rows end at {bottom:.0f} px: not one screen"


def test_no_figure_is_cut_and_the_join_link_never_breaks_inside_the_code(board):
    page, code, _ = board
    values = page.locator("[data-testid='stMetricValue']")
    assert values.all_inner_texts()[:4] == ["30", "30", "5", "1 h 05 min"]
    assert _clipped(page, "[data-testid='stMetricValue'], [data-testid='stMetricValue'] *") == []
    assert _clipped(page, "[data-testid='stMetricLabel'] p") == []
    assert _clipped(page, ".jaxplay-verdict") == [], "no badge cut"
    part = page.locator(".jaxplay-board-join .jaxplay-code-part")
    assert part.inner_text() == code
    assert part.evaluate("el => el.getClientRects().length") == 1, "the code is one piece on one line"
    assert page.locator(".jaxplay-board-code").inner_text().strip() == code


def test_the_most_common_failure_counts_every_learner_failing_it_in_plain_text(board):
    page, _, failing = board
    box = page.locator(".st-key-board-failure")
    text = box.inner_text()
    dots = [n for n, ids in failing.items() if DOTS in ids]
    assert f"{len(dots)} learners not yet through" in text and "`" not in text
    assert f"{DOTS} not met" in text
    assert ", ".join(dots[:12]) in text
