"""Shared pieces of the browser tests: a Streamlit server on a free port, Debian's Chromium, the editor.

Chromium is launched without Playwright's default ``--hide-scrollbars``, so "a formula scrolls visibly" can
be checked as a learner would see it. Every request any page makes is logged, so a test can check that
nothing leaves localhost.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
ACE_FRAME = 'iframe[title="streamlit_ace.streamlit_ace"]'
DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_name: str = "streamlit.log", env: dict | None = None):
    """``streamlit run app.py`` as the README says, on a free port; returns (process, url, log file)."""
    port = free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / log_name, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})), stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, url, log
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"streamlit did not start: see {ARTIFACTS / log_name}")
        time.sleep(0.3)


def stop_server(proc, log) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def launch(playwright):
    assert Path(CHROMIUM).exists(), "Chromium is missing: `apt-get install chromium` (see .ci/run)"
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                      ignore_default_args=["--hide-scrollbars"])


def new_page(browser, requests: list[str], viewport=DESKTOP, scheme: str = "light"):
    page = browser.new_page(viewport=viewport, color_scheme=scheme)
    page.on("request", lambda r: requests.append(r.url))
    return page


def ace_frame(page):
    page.locator(ACE_FRAME).first.wait_for(timeout=60_000)
    deadline = time.monotonic() + 60
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


def set_code(page, code: str) -> None:
    """Put ``code`` in the editor with the cursor at the top (so nothing scrolls), as pasted text."""
    ace_frame(page).evaluate(
        "code => { const e = ace.edit(document.querySelector('.ace_editor')); e.setValue(code, -1); e.blur(); }", code)


def get_code(page) -> str:
    return ace_frame(page).evaluate("() => ace.edit(document.querySelector('.ace_editor')).getValue()")


def verdict(page, words: str, timeout_s: float = 240):
    """The verdict banner once it says ``words`` (on a timeout, the error says what the banner said)."""
    banner = page.locator(".st-key-verdict", has_text=words).first
    try:
        banner.wait_for(timeout=timeout_s * 1000)
    except Exception as exc:  # noqa: BLE001 - re-raised with what was on screen
        shown = page.locator(".st-key-verdict").all_inner_texts()
        raise AssertionError(f"no verdict with {words!r} within {timeout_s:g} s; on screen: {shown}") from exc
    return banner


def box(locator) -> dict:
    b = locator.bounding_box()
    assert b is not None, "not rendered"
    return b


def open_tab(page, name: str):
    """Click a result tab and return its content once the page has built it (tabs are built when opened)."""
    page.get_by_role("tab", name=name, exact=True).click()
    content = page.locator(f".st-key-tab-{name.lower().replace(' ', '-')}")
    content.wait_for(timeout=60_000)
    deadline = time.monotonic() + 30  # the container appears before what it holds is drawn into it
    while time.monotonic() < deadline and not content.inner_text().strip():
        page.wait_for_timeout(200)
    return content
