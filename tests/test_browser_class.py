"""A class in a real browser: a teacher starts a class at 1920x1080, two learners join in two browser contexts
(one on a phone), both press Run, and the projected board shows each result within 5 s of its verdict. The
board without its key shows no learner; nicknames are text; the last code is one click away."""
from __future__ import annotations

import re
import time

import pytest

import problems
from browser_helpers import ARTIFACTS, PHONE, launch, set_code, start_server, stop_server, verdict

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECTOR = {"width": 1920, "height": 1080}
REMAT = "rematerialized-mlp-block"
BOARD_WITHIN_S = 5.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("class-data")
    proc, url, log = start_server("streamlit-class.log", env={"JAXPLAY_DATA": str(data), "JAXPLAY_DB": ""})
    yield url
    stop_server(proc, log)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def _learner_row(board, nickname: str):
    return board.locator("[class*='st-key-board-learner-']", has_text=nickname).first


def _wait_on_board(board, nickname: str, words: str, started: float) -> float:
    """Seconds from ``started`` until the board's row for ``nickname`` shows ``words``."""
    row = _learner_row(board, nickname)
    row.filter(has_text=words).wait_for(timeout=BOARD_WITHIN_S * 1000 + 2000)
    return time.monotonic() - started


def test_a_teacher_projects_a_live_board_while_two_learners_join_and_run(server, browser):
    teacher = browser.new_context(viewport=PROJECTOR).new_page()
    teacher.goto(f"{server}/class")
    teacher.get_by_label("Class name (optional)").fill("JAX workshop")
    teacher.get_by_role("button", name="Start a class").click()
    code_box = teacher.locator(".jaxplay-class-code")
    code_box.wait_for(timeout=30_000)
    code = code_box.inner_text().strip()
    assert re.fullmatch(r"[A-Z2-9]{6}", code)
    assert float(code_box.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")) >= 48, "readable from the back"
    join_href = teacher.locator(f'a[href$="?class={code}"]').first.get_attribute("href")
    board_href = teacher.get_by_role("link", name="Open the class board").get_attribute("href")
    assert re.search(rf"/board\?class={code}&key=[\w-]{{16,}}$", board_href)
    teacher.screenshot(path=str(ARTIFACTS / "class-started.png"))

    # The board without its key: nothing of the class's learners.
    stranger = browser.new_context(viewport=PROJECTOR).new_page()
    stranger.goto(f"{server}/board?class={code}&key=not-the-key")
    stranger.get_by_text("This board needs its key").wait_for(timeout=30_000)

    teacher.goto(board_href)
    teacher.get_by_text("Waiting for the first Run").wait_for(timeout=30_000)

    laptop = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    names = {laptop: "ana", phone: "<b>bo</b> 🐍"}
    for page, name in names.items():
        page.goto(join_href)
        page.get_by_label("Nickname").fill(name)
        if page is phone:
            page.screenshot(path=str(ARTIFACTS / "class-join-phone.png"))
        page.get_by_role("button", name="Join class").click()
        page.get_by_text(f"Class {code} · {name}").first.wait_for(timeout=30_000)
        # kept in the browser at the end of that script run, like the code (the next page load reads it)
        page.wait_for_function("() => localStorage.getItem('jaxplay:class') !== null", timeout=10_000)
    phone.screenshot(path=str(ARTIFACTS / "class-joined-phone.png"))
    for name in names.values():
        _learner_row(teacher, name).wait_for(timeout=BOARD_WITHIN_S * 1000)
    assert teacher.locator("b", has_text="bo").count() == 0, "a nickname is text, not HTML"

    # The chip follows the learner to every page, and the class is kept across a reload.
    laptop.goto(f"{server}/{REMAT}")
    phone.goto(f"{server}/{REMAT}")
    for page, name in names.items():
        page.get_by_text(f"Class {code} · {name}").first.wait_for(timeout=30_000)

    remat = problems.get(REMAT)
    wrong = remat.reference.replace('return {"loss": loss, "grads": grads}', 'return {"loss": 2 * loss, "grads": grads}')
    for page, code_text, words, label in ((laptop, remat.reference, "Accepted", "Accepted"),
                                          (phone, wrong, "Wrong Answer", "Wrong Answer")):
        set_code(page, code_text)
        page.get_by_role("button", name="Run", exact=True).click()
        try:
            verdict(page, words, 180)
        finally:
            page.screenshot(path=str(ARTIFACTS / f"class-run-{label}.png"))
        took = _wait_on_board(teacher, names[page], label, time.monotonic())
        assert took <= BOARD_WITHIN_S, f"the board showed {names[page]}'s Run {took:.1f} s after its verdict"

    set_code(laptop, remat.reference)
    laptop.get_by_role("button", name="Submit", exact=True).click()
    verdict(laptop, "Submit (examples + hidden cases)", 240)  # (the Run's Accepted is on screen until then)
    assert "Accepted" in laptop.locator(".st-key-verdict").first.inner_text()
    # The board redraws element by element: the Solved metric can be new while the rows below it are still the
    # last refresh's. So everything the Submit changes must be on the board within the same 5 s.
    submitted = time.monotonic()
    board = teacher.locator(".st-key-board")
    solved = teacher.locator('[data-testid="stMetric"]', has_text="Solved")
    try:
        solved.filter(has_text=re.compile(r"Solved \(Submit accepted\)\s*1\b")).wait_for(timeout=BOARD_WITHIN_S * 1000)
        for text in ("2 of 2 pass", "Fastest: ana"):
            left = BOARD_WITHIN_S - (time.monotonic() - submitted)
            board.filter(has_text=text).wait_for(timeout=max(left, 0.1) * 1000)
        _learner_row(teacher, "ana").filter(has_text="2 attempts").wait_for(
            timeout=max(BOARD_WITHIN_S - (time.monotonic() - submitted), 0.1) * 1000)
    except Exception as exc:  # noqa: BLE001 - say what the board showed
        teacher.screenshot(path=str(ARTIFACTS / "class-board-after-submit.png"))
        raise AssertionError(f"the board {BOARD_WITHIN_S:g} s after the Submit's verdict: {board.inner_text()}") from exc
    board_text = board.inner_text()
    assert "Wrong Answer: loss: got …, expected …" in board_text, "the most common failure, numbers left out"
    dots = teacher.locator('[data-requirement="checkpoint-dots-saveable"]').inner_text()
    assert "2 of 2 pass" in dots and "everyone who ran passes" in dots and "Fastest: ana" in board_text
    assert "2 attempts" in _learner_row(teacher, "ana").inner_text()
    teacher.wait_for_timeout(500)
    teacher.screenshot(path=str(ARTIFACTS / "class-board-projector.png"))

    # The last code, one click away, read-only.
    _learner_row(teacher, "ana").get_by_role("button", name="Code").click()
    dialog = teacher.get_by_role("dialog")
    dialog.get_by_text("jax.checkpoint", exact=False).first.wait_for(timeout=15_000)
    assert "Submit of" in dialog.inner_text()
    teacher.screenshot(path=str(ARTIFACTS / "class-board-code.png"))
    dialog.get_by_label("Close").click()
    teacher.wait_for_timeout(2 * 2000)  # two refreshes of the board: the dialog stays closed
    assert teacher.get_by_role("dialog").count() == 0

    # Download CSV: one row per recorded Run or Submit.
    with teacher.expect_download() as download:
        teacher.get_by_role("button", name="Download CSV").click()
    lines = open(download.value.path()).read().splitlines()
    assert lines[0].startswith("nickname,problem,kind,verdict,requirements_passed,requirements_failed,at")
    assert len(lines) == 1 + 3 and any(line.startswith("ana," + REMAT + ",submit,accepted") for line in lines)
    for ctx_page in (laptop, phone, stranger):
        ctx_page.context.close()
    teacher.context.close()
