"""The app in a real browser: Debian's Chromium driven by Playwright against ``streamlit run app.py``.

The test starts the server itself on a free port and waits for ``/_stcore/health``. It never skips: in CI
(``.ci/run``) Chromium comes from apt and Playwright from pip; a missing browser is a failure.
Screenshots go to ``artifacts/`` for a person to look at.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import problems

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
GA = "gradient-accumulation-with-scan"
ACE_FRAME = 'iframe[title="streamlit_ace.streamlit_ace"]'

# A Python loop over the microbatches: right numbers, no lax.scan (the problem's own known-bad submission).
PYTHON_LOOP = (Path(__file__).resolve().parents[1] / "problems" / "gradient-accumulation-with-scan" / "submissions"
               / "requirements_not_met" / "python_loop.py").read_text()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    log = open(ARTIFACTS.mkdir(exist_ok=True) or ARTIFACTS / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"streamlit did not start: see {ARTIFACTS / 'streamlit.log'}")
        time.sleep(0.3)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    assert Path(CHROMIUM).exists(), "Chromium is missing: `apt-get install chromium` (see .ci/run)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _ace_frame(page):
    page.locator(ACE_FRAME).wait_for(timeout=30_000)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for frame in page.frames:
            if "streamlit_ace" in frame.url:
                try:
                    if frame.evaluate("() => !!(window.ace && document.querySelector('.ace_editor'))"):
                        return frame
                except Exception:  # noqa: BLE001 - the frame may still be loading
                    pass
        page.wait_for_timeout(200)
    raise AssertionError("the Ace editor did not appear")


def _set_code(page, code: str) -> None:
    _ace_frame(page).evaluate("code => ace.edit(document.querySelector('.ace_editor')).setValue(code, 1)", code)


def _get_code(page) -> str:
    return _ace_frame(page).evaluate("() => ace.edit(document.querySelector('.ace_editor')).getValue()")


def _verdict(page, words: str, timeout_s: float = 240):
    banner = page.locator('[data-testid="stAlertContainer"]', has_text=words).first
    banner.wait_for(timeout=timeout_s * 1000)
    return banner


def test_solve_in_the_browser_structural_failure_and_reload(server, browser):
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    # Straight to a problem's URL on a fresh server: the page opens, with no "Page not found" dialog.
    page.goto(f"{server}/{GA}")
    _ace_frame(page)
    assert page.get_by_text("Page not found").count() == 0

    page.goto(server + "/")
    main = page.locator('[data-testid="stMain"]')
    for p in problems.registry().values():
        main.get_by_text(p.title, exact=True).first.wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)

    main.get_by_text(problems.get(GA).title, exact=True).first.click()
    page.wait_for_url(f"**/{GA}", timeout=30_000)
    main.get_by_role("heading", name="Hints").wait_for(timeout=30_000)
    main.get_by_role("heading", name="Constraints").wait_for(timeout=30_000)

    # A right answer, put in and submitted at once: the click must grade this text, not an older one.
    _set_code(page, problems.get(GA).reference)
    page.get_by_role("button", name="Submit").click()
    page.get_by_text("Submitting").first.wait_for(timeout=30_000)
    banner = _verdict(page, "Accepted")
    assert "cases passed" in banner.inner_text()
    page.get_by_role("tab", name="jaxpr").click()
    jaxpr = page.locator(".jaxplay-jaxpr").first
    jaxpr.wait_for(timeout=30_000)
    assert "scan[" in jaxpr.inner_text()
    page.screenshot(path=str(ARTIFACTS / "accepted.png"), full_page=True)

    # Home now marks the problem solved; going back, the editor still holds the accepted code.
    page.get_by_role("link", name="Home").first.click()
    card = main.locator(f".st-key-problem-card-{GA}")
    card.get_by_text("Solved").wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "home-solved.png"))
    card.get_by_text(problems.get(GA).title, exact=True).click()
    page.wait_for_url(f"**/{GA}", timeout=30_000)
    _ace_frame(page)
    assert _get_code(page) == problems.get(GA).reference

    # A Python loop gives the right numbers but no scan: Requirements Not Met, with one-scan failing.
    _set_code(page, PYTHON_LOOP)
    page.get_by_role("button", name="Submit").click()
    banner = _verdict(page, "Requirements Not Met")
    assert "one-scan" in banner.inner_text()
    page.get_by_role("tab", name="Requirements").click()
    page.screenshot(path=str(ARTIFACTS / "requirements-not-met.png"), full_page=True)

    # The code survives a reload of the page.
    page.wait_for_timeout(500)
    page.reload()
    _ace_frame(page)
    deadline = time.monotonic() + 20
    while _get_code(page) != PYTHON_LOOP and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    assert _get_code(page) == PYTHON_LOOP
    main.get_by_text("Solved").first.wait_for(timeout=10_000)  # the solved mark is kept in the browser too
    page.screenshot(path=str(ARTIFACTS / "after-reload.png"))
    assert not errors, errors
    page.close()


def test_ctrl_enter_runs_the_examples_and_reset_asks_first(server, browser):
    remat = problems.get("rematerialized-mlp-block")
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.goto(f"{server}/{remat.slug}")
    wrong = remat.reference.replace('return {"loss": loss, "grads": grads}', 'return {"loss": 2 * loss, "grads": grads}')
    _set_code(page, wrong)
    frame = _ace_frame(page)
    # The browser bridge takes over Ctrl+Enter once it has found the editor (it then styles it): wait for that.
    frame.locator("#jaxplay-ace-style").wait_for(state="attached", timeout=60_000)
    frame.locator(".ace_content").click()
    page.keyboard.press("Control+Enter")
    banner = _verdict(page, "Wrong Answer", timeout_s=120)
    assert "Run (visible examples)" in banner.inner_text()
    assert _get_code(page) == wrong, "Ctrl+Enter must run, not insert a line"
    page.screenshot(path=str(ARTIFACTS / "wrong-answer.png"))

    page.get_by_role("button", name="Reset").click()
    page.get_by_role("button", name="Reset code").click()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if _get_code(page) == remat.starter:
                break
        except Exception:  # noqa: BLE001 - the fresh editor may still be loading
            pass
        page.wait_for_timeout(250)
    assert _get_code(page) == remat.starter
    page.reload()
    _ace_frame(page)
    page.wait_for_timeout(1000)
    assert _get_code(page) == remat.starter, "a reset also forgets the code saved in the browser"
    page.close()
