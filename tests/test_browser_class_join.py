"""A learner's pages in Chromium (issue 42): Home and a problem page draw the Class code field at once, on one
line, and nothing moves when the browser's storage arrives; and "Recorded later" under a verdict goes by
itself once the record is in the database."""
from __future__ import annotations

import sqlite3
import time

import pytest

import problems
from browser_helpers import ARTIFACTS, PHONE, launch, set_code, start_server, stop_server, verdict

pytestmark = [pytest.mark.browser, pytest.mark.slow]
REMAT = "rematerialized-mlp-block"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from playwright.sync_api import sync_playwright
    data = tmp_path_factory.mktemp("class-join")
    db = data / "classroom.sqlite3"
    proc, url, log = start_server("streamlit-class-join.log", env={"JAXPLAY_DATA": str(data / "data"),
                                                                    "JAXPLAY_DB": f"sqlite:///{db}"})
    try:
        with sync_playwright() as p:
            browser = launch(p)
            yield browser, url, db
            browser.close()
    finally:
        stop_server(proc, log)


def _field_comes_with_the_page(page, title: str) -> dict:
    """The Class code field's box when the page's title shows, and again once the page has settled."""
    heading = page.get_by_role("heading", name=title).first
    heading.wait_for(timeout=240_000)
    shown = time.monotonic()
    field = page.get_by_placeholder("Class code, e.g. K7QX3M")
    field.wait_for(timeout=30_000)
    late = time.monotonic() - shown
    print(f"the field came {late:.2f} s after the title")
    assert late <= 1.5, f"the field came {late:.1f} s after the page's title, not with it (the storage's wait)"
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')"
                           ".getAttribute('data-test-script-state') === 'notRunning'", timeout=60_000)
    block = page.locator("[class*='st-key-class-code-']").first
    first, title_top = block.bounding_box(), heading.bounding_box()["y"]
    page.wait_for_timeout(3000)  # the browser's storage has come, and its script runs: nothing moves
    assert block.bounding_box() == first, "the field stayed where it was drawn"
    assert heading.bounding_box()["y"] == title_top, "the page did not shift"
    return first


def test_home_and_a_problem_page_draw_the_class_code_field_at_once_on_one_line(app):
    browser, url, _ = app
    home = browser.new_page(viewport={"width": 1400, "height": 900})
    home.goto(f"{url}/")
    box = _field_comes_with_the_page(home, "JAX Playground")
    assert box["height"] <= 48, f"one line: {box}"
    home.screenshot(path=str(ARTIFACTS / "class-code-home.png"))
    phone = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    phone.goto(f"{url}/{REMAT}")
    box = _field_comes_with_the_page(phone, problems.get(REMAT).title)
    assert box["height"] <= 48, f"a learner in no class: one line above the problem, not {box['height']:.0f} px"
    phone.screenshot(path=str(ARTIFACTS / "class-code-phone.png"))
    for page in (home, phone):
        page.close()


def test_recorded_later_goes_by_itself_once_the_record_is_in(app):
    """The issue: the note "Recorded later" stayed under the verdict 20 s after the row was in."""
    from classroom import ClassStore
    browser, url, db = app
    info, _ = ClassStore(f"sqlite:///{db}").start_class()
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{url}/{REMAT}?class={info.code}")
    page.get_by_label("Nickname").fill("ana")
    page.get_by_role("button", name="Join class").click()
    page.get_by_text(f"Class {info.code} · ana").first.wait_for(timeout=60_000)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # the database takes no write: the record waits in the outbox
    try:
        set_code(page, problems.get(REMAT).reference)
        page.get_by_role("button", name="Run", exact=True).click()
        verdict(page, "Accepted", 180)
        page.get_by_text("Recorded later").first.wait_for(timeout=10_000)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    released = time.monotonic()
    page.get_by_text("Recorded later").first.wait_for(state="detached", timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "class-recorded-later-gone.png"))
    assert time.monotonic() - released <= 25, "gone once the record landed, with no click"
    assert len(ClassStore(f"sqlite:///{db}").attempts(info.code)) == 1
    page.close()
