"""The app in a real browser: Debian's Chromium driven by Playwright against ``streamlit run app.py``.

One server and one browser for the module. The first test is a cold first visit: the server has just
started and the very first request is a problem's URL. Tests never skip: in CI (``.ci/run``) Chromium comes
from apt and Playwright from pip; a missing browser is a failure. Screenshots go to ``artifacts/``.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

import problems
from grader.grading.grade import limits_for
from grader.sandbox.pool import LONG_RUN_WALL_FACTOR
from browser_helpers import (ARTIFACTS, DESKTOP, PHONE, box, get_code, launch, new_page, open_tab, set_code,
                                   start_server, stop_server, verdict, ace_frame)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GA = "gradient-accumulation-with-scan"
REMAT = "rematerialized-mlp-block"
SUBMISSIONS = Path(__file__).resolve().parents[1] / "problems" / GA / "submissions"
PYTHON_LOOP = (SUBMISSIONS / "requirements_not_met" / "python_loop.py").read_text()

# Differentiating *through* a scan: the numbers are right, the scan appears twice (once reversed).
THROUGH_SCAN = '''import jax
import jax.numpy as jnp


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def total(params):
        def step(s, batch):
            return s + _loss(params, *batch), None
        s, _ = jax.lax.scan(step, jnp.float32(0.0), (xs, ys))
        return s / num_microbatches

    loss, grads = jax.value_and_grad(total)(params)
    return {"loss": loss, "grads": grads}
'''


@pytest.fixture(scope="module")
def server():
    proc, url, log = start_server(env={"JAXPLAY_COST_SIZE": "small"})  # the Cost tab measures at test sizes
    yield url
    stop_server(proc, log)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def requests_seen() -> list[str]:
    """Every URL any page of this module requested (checked by the last test)."""
    return []


COLD_WATCH = """
window.__seen = [];
const note = (what) => { if (!window.__seen.includes(what)) window.__seen.push(what); };
const check = () => {
  const body = document.body;
  if (!body) return;
  const text = body.innerText || "";
  if (/page not found|does not seem to exist/i.test(text)) note("Page not found");
  for (const d of document.querySelectorAll('[role="dialog"]')) note("dialog: " + (d.innerText || "").slice(0, 80));
  const nav = document.querySelector('[data-testid="stSidebarNav"]');
  if (nav && /bridge|runs|result|custom|progress|statement|markup|isolation/i.test(nav.innerText || "")) {
    note("sidebar lists modules: " + (nav.innerText || "").slice(0, 80));
  }
  const side = document.querySelector('[data-testid="stSidebar"][aria-expanded="true"]');
  if (side) note("sidebar open");
};
new MutationObserver(check).observe(document, {subtree: true, childList: true, characterData: true});
setInterval(check, 50);
"""


def test_a_cold_first_visit_to_a_problem_never_shows_page_not_found_or_a_module_list(server, browser, requests_seen):
    """Fresh server, first request a problem's URL: at no moment a dialog, a "Page not found" or a sidebar."""
    page = new_page(browser, requests_seen)
    page.add_init_script(COLD_WATCH)
    started = time.monotonic()
    page.goto(f"{server}/{GA}")
    shots = 0
    while time.monotonic() - started < 6:
        page.screenshot(path=str(ARTIFACTS / f"cold-visit-{shots:02d}.png"))
        shots += 1
        page.wait_for_timeout(400)
    page.get_by_role("heading", name=problems.get(GA).title).wait_for(timeout=30_000)
    ace_frame(page)
    assert page.evaluate("window.__seen") == [], page.evaluate("window.__seen")
    assert shots >= 2  # the watcher above checks every change; the screenshots are for a person
    page.close()


def test_run_puts_the_verdict_and_case_strip_under_the_editor_on_one_desktop_screen(server, browser, requests_seen):
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    set_code(page, problems.get(REMAT).reference)
    page.get_by_role("button", name="Run", exact=True).click()
    banner = verdict(page, "Accepted", 120)
    strip = page.locator(".st-key-case-strip")
    strip.wait_for()
    title = page.get_by_role("heading", name=problems.get(REMAT).title)
    editor = page.locator('iframe[title="streamlit_ace.streamlit_ace"]')
    tabs = page.locator('[data-testid="stTabs"]').first
    assert box(title)["y"] >= 0, "the page did not scroll"
    assert box(editor)["y"] + box(editor)["height"] <= box(banner)["y"], "the verdict sits under the editor"
    assert box(strip)["y"] + box(strip)["height"] <= DESKTOP["height"], "verdict and case strip on screen at 1400x900"
    assert box(tabs)["y"] > box(strip)["y"], "the tabs follow"
    assert strip.inner_text().count("✓") == len(problems.get(REMAT).examples)
    page.screenshot(path=str(ARTIFACTS / "run-accepted-desktop.png"))
    page.close()


def test_submit_accepted_table_is_readable_and_the_verdict_survives_a_reload(server, browser, requests_seen):
    problem = problems.get(GA)
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{GA}")
    set_code(page, problem.reference)
    page.get_by_role("button", name="Submit", exact=True).click()
    banner = verdict(page, "Accepted")
    total = len(problem.cases())
    assert f"{total}/{total} cases passed" in banner.inner_text()
    assert page.locator(".st-key-case-strip").inner_text().count("✓") == total
    table = open_tab(page, "Test cases").locator('[data-testid="stDataFrame"]').first
    table.wait_for()
    assert box(table)["width"] > 600  # its columns are pinned by test_app_results (the grid draws on a canvas)
    page.screenshot(path=str(ARTIFACTS / "submit-accepted.png"))

    page.wait_for_timeout(800)  # the verdict reaches the browser's storage at the end of the script run
    page.reload()
    banner = verdict(page, "Accepted", 240)
    assert f"{total}/{total} cases passed" in banner.inner_text()
    assert "kept in this browser" in page.locator('[data-testid="stMain"]').inner_text()
    assert get_code(page) == problem.reference

    page.get_by_role("link", name="Home").first.click()  # home marks it solved, in this browser
    page.locator(f".st-key-problem-card-{GA}").get_by_text("Solved").wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "home-solved.png"))
    page.close()


def test_a_failed_requirement_opens_the_jaxpr_at_its_equation_with_reasons_jumps_and_the_structure(
        server, browser, requests_seen):
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{GA}")
    set_code(page, THROUGH_SCAN)
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Requirements Not Met", 120)

    # The grader's Markdown renders as intended: emphasis, not literal asterisks.
    reqs = open_tab(page, "Requirements")
    one_scan = reqs.locator(".st-key-req-one-scan")
    one_scan.get_by_text("through", exact=True).first.wait_for()
    assert one_scan.locator("em", has_text="through").count() == 1
    assert "*through*" not in one_scan.inner_text()

    # A jump link from the requirement switches to the jaxpr tab and brings its equation into view.
    link = one_scan.locator("a[data-jaxpr-line]").first
    line_no = link.get_attribute("data-jaxpr-line")
    link.click()
    listing = page.locator(".jaxplay-jaxpr.mine")
    target = listing.locator(f'[data-line="{line_no}"]')
    target.wait_for()
    page.wait_for_timeout(500)
    lb, tb = box(listing), box(target)
    assert lb["y"] <= tb["y"] <= lb["y"] + lb["height"], "the jump scrolled the equation into the listing's view"

    # Opened afresh, the listing starts at the first failing equation, which says why and names the line.
    focus = int(listing.get_attribute("data-focus"))
    assert focus > 20, "the evidence is well down the listing"
    page.reload()
    verdict(page, "Requirements Not Met", 240)
    open_tab(page, "jaxpr")
    listing = page.locator(".jaxplay-jaxpr.mine")
    line = listing.locator(f'[data-line="{focus}"]')
    line.wait_for()
    page.wait_for_timeout(800)
    assert listing.evaluate("el => el.scrollTop") > 0
    lb, fb = box(listing), box(line)
    assert lb["y"] <= fb["y"] <= lb["y"] + lb["height"]
    assert re.search(r"✗ one-scan: .+ · your line \d+", line.inner_text()), line.inner_text()
    assert listing.locator("details").count() >= 1, "sub-programs can be folded"
    page.screenshot(path=str(ARTIFACTS / "jaxpr-failed-requirement.png"))

    # The reference's jaxpr below, full width.
    page.get_by_text("Show the reference solution's jaxpr below").click()
    ref = page.locator(".jaxplay-jaxpr.reference")
    ref.wait_for(timeout=60_000)
    assert box(ref)["width"] > 0.9 * box(listing)["width"]

    # The structure picture: yours beside the reference's, evidence tags coloured.
    panel = open_tab(page, "Structure")
    charts = panel.locator('[data-testid="stGraphVizChart"] svg')
    charts.nth(1).wait_for(timeout=60_000)
    yours, theirs = (charts.nth(i).evaluate("svg => svg.textContent") for i in (0, 1))
    assert yours.count("scan") >= 2 and "reverse" in yours, "two scans, the second reversed under autodiff"
    assert "✗ one-scan" in yours and "✓ one-scan" in theirs
    fills = panel.locator('[data-testid="stGraphVizChart"] svg').nth(0).evaluate(
        "svg => Array.from(svg.querySelectorAll('g.node path, g.node polygon')).map(p => p.getAttribute('fill'))")
    assert "#e03131" in fills
    panel.screenshot(path=str(ARTIFACTS / "structure.png"))
    page.close()


def test_a_phone_stacks_everything_and_nothing_covers_run(server, browser, requests_seen):
    page = new_page(browser, requests_seen, viewport=PHONE, scheme="dark")
    page.goto(f"{server}/{REMAT}")
    editor = page.locator('iframe[title="streamlit_ace.streamlit_ace"]')
    set_code(page, problems.get(REMAT).reference)
    # Issue 32: Run started 1,119 px down; now it is on the first screen, before any scrolling, on top
    assert page.evaluate("document.scrollingElement.scrollTop") == 0
    first = box(page.get_by_role("button", name="Run", exact=True))
    assert 0 <= first["y"] and first["y"] + first["height"] <= PHONE["height"], f"Run at y {first['y']}"
    assert page.evaluate("([x, y]) => !!document.elementFromPoint(x, y).closest('.st-key-run_btn')",
                         [first["x"] + first["width"] / 2, first["y"] + first["height"] / 2]), "Run is not covered"
    scrolled = page.evaluate("""() => {  // the page's own scroller (Streamlit scrolls its main section)
      const el = [document.querySelector('[data-testid="stMain"]'), document.querySelector('[data-testid="stAppViewContainer"]'),
                  document.scrollingElement].find((e) => e && e.scrollHeight > e.clientHeight + 50);
      if (!el) return 0;
      el.scrollBy(0, 600);
      return el.scrollTop; }""")
    page.wait_for_timeout(400)
    assert scrolled > 0, "the page scrolled"
    assert box(page.get_by_role("button", name="Run", exact=True))["y"] == first["y"], "Run stays in reach"
    assert page.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0
    run = page.get_by_role("button", name="Run", exact=True)
    run.scroll_into_view_if_needed()
    rb = box(run)
    on_top = page.evaluate("([x, y]) => { const el = document.elementFromPoint(x, y); return !!(el && el.closest('button') "
                           "&& el.closest('button').innerText.includes('Run')); }", [rb["x"] + rb["width"] / 2, rb["y"] + rb["height"] / 2])
    assert on_top, "nothing covers Run"
    statement = page.locator(".st-key-statement-pane")
    assert box(statement)["y"] < box(editor)["y"], "statement, then editor"
    top = page.evaluate("document.scrollingElement.scrollTop")
    assert box(editor)["y"] + top < 1.2 * PHONE["height"], "the editor is reached without scrolling the statement"
    rows = {round(box(page.get_by_role("button", name=name, exact=True))["y"]) for name in ("Run", "Submit", "Reset")}
    assert len(rows) == 1, f"Run, Submit and Reset in one row, got rows at {rows}"
    assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"] + 1, "nothing off to the right"
    run.click()
    banner = verdict(page, "Accepted", 120)
    page.wait_for_timeout(1500)  # the page scrolls it into view, smoothly
    b = box(banner)
    assert 0 <= b["y"] and b["y"] + min(b["height"], 200) <= PHONE["height"], "the verdict is brought into view"
    assert box(banner)["x"] + box(banner)["width"] <= PHONE["width"] + 1
    page.screenshot(path=str(ARTIFACTS / "phone-accepted-dark.png"))
    page.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_display_formula_fits_or_scrolls_visibly(server, browser, requests_seen, viewport):
    page = new_page(browser, requests_seen, viewport=viewport)
    bad = []
    for slug in problems.registry():
        page.goto(f"{server}/{slug}")
        page.locator(".katex-display").first.wait_for(timeout=60_000)
        # The page's own style sheet arrives as an element of its own, possibly a moment after the first
        # formula; measure once it applies (a loaded machine otherwise measures Streamlit's bare sizes).
        page.wait_for_function("""() => [...document.querySelectorAll('.katex-display')]
                                   .every(e => getComputedStyle(e).overflowX === 'auto')""", timeout=30_000)
        for fits, visible_bar, width in page.locator(".katex-display").evaluate_all(
                "els => els.map(e => [e.scrollWidth <= e.clientWidth + 1, e.offsetHeight - e.clientHeight >= 6, e.scrollWidth])"):
            if not fits and not visible_bar:
                bad.append((slug, width))
    assert not bad, f"formulas cut off with no visible scrollbar: {bad}"
    page.close()


def test_the_console_is_a_bounded_box_with_a_download(server, browser, requests_seen):
    code = problems.get(REMAT).reference.replace("def remat_mlp_block(params, x, y):",
                                                 "def remat_mlp_block(params, x, y):\n"
                                                 "    print('y' * 100_000)")  # one line a case: a thousand rows
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    set_code(page, code)
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Accepted", 120)
    panel = open_tab(page, "Console")
    block = panel.locator('[data-testid="stCode"] >> visible=true').first
    block.wait_for()
    assert box(block)["height"] < 400
    assert panel.get_by_role("button", name="Download").count() >= 1
    page.close()


def test_custom_input_never_shows_a_stale_result_beside_a_new_error(server, browser, requests_seen):
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    set_code(page, problems.get(REMAT).reference)
    panel = open_tab(page, "Custom input")
    panel.get_by_role("button", name="Run custom input").click()
    page.get_by_text("Your output matches the reference's.").wait_for(timeout=120_000)
    area = page.get_by_label("Inputs (JSON)")
    area.fill("{ not json")
    area.blur()
    page.wait_for_timeout(300)
    panel.get_by_role("button", name="Run custom input").click()
    page.get_by_text("Not valid JSON").wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    assert page.get_by_text("Your output matches the reference's.").count() == 0
    assert panel.locator(".st-key-custom-table").count() == 0
    page.close()


def _chart_cover() -> list[str]:
    """Problems whose Cost tabs together draw every chart metric and both chart kinds (a sweep's lines, a
    single size's bars): the fewest, greedily. The drawing is the same code for every problem, and
    tests/test_cost.py measures every problem's insight and checks its chart data; here Chromium draws each
    kind of chart from a real measurement at the problem's own sizes (issue 14)."""
    wanted = {}
    for p in problems.registry().values():
        if p.insight is not None:
            kind = "line" if p.insight.sweep is not None else "bar"
            wanted[p.slug] = {(kind, c.metric) for c in p.insight.charts_for("cpu")} | {(kind, None)}
    cover, left = [], set().union(*wanted.values())
    while left:
        slug = max(sorted(wanted), key=lambda s: len(wanted[s] & left))
        cover.append(slug)
        left -= wanted[slug]
    return cover


INSIGHTS = _chart_cover()


@pytest.mark.parametrize("slug", INSIGHTS)
def test_the_cost_tab_measures_and_draws_every_declared_chart(server, browser, requests_seen, slug):
    """Issue 14: the Cost tab's own button measures the code in the editor beside the reference and the
    naive version, and draws each chart the problem declares with its takeaway (for the problems that
    together draw every metric and kind of chart: ``_chart_cover``)."""
    problem = problems.get(slug)
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{slug}")
    set_code(page, problem.reference)
    panel = open_tab(page, "Cost")
    panel.get_by_role("button", name="Measure cost").click()
    for chart in problem.insight.charts_for("cpu"):
        page.get_by_text(chart.title, exact=True).wait_for(timeout=240_000)
        # the takeaway is sent after the chart: wait for it too
        page.get_by_text(re.sub(r"[`*$]", "", chart.takeaway)[:40], exact=False).first.wait_for(timeout=30_000)
    # the chart component loads lazily after its title is on screen: wait for it
    expect(panel.locator('[data-testid="stVegaLiteChart"]')).to_have_count(len(problem.insight.charts_for("cpu")),
                                                                            timeout=30_000)
    assert page.get_by_text("could not be measured").count() == 0
    page.close()


def test_a_measurement_never_locks_the_editor_and_says_what_is_left(server, browser, requests_seen):
    """Issue 32: the TPU plan took 261 s with Run, Submit and Reset disabled. A measurement runs in the
    background: its progress shows, and Run grades meanwhile."""
    problem = problems.get(REMAT)
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    # A measurement of the reference's own programs is quick once the server has their figures (the chart test
    # above measured them): an import that takes a few seconds keeps this one running long enough to be seen.
    set_code(page, "import time\ntime.sleep(8)  # a slow import\n" + problem.reference)
    panel = open_tab(page, "Cost")
    panel.get_by_role("button", name="Measure cost").click()
    status = page.locator(".st-key-cost-progress")
    status.wait_for(timeout=60_000)
    for name in ("Run", "Submit", "Reset"):
        assert page.get_by_role("button", name=name, exact=True).is_enabled(), f"{name} is locked"
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Accepted", 120)
    charts = problem.insight.charts_for("cpu")
    page.get_by_text(charts[0].title, exact=True).wait_for(timeout=240_000)
    page.close()


def test_an_endless_loop_on_run_stops_in_seconds_and_says_where(server, browser, requests_seen):
    problem = problems.get(REMAT)
    most = limits_for(problem, True, load=1e9).wall_s  # the cap, on the busiest machine
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    set_code(page, "def remat_mlp_block(params, x, y):\n    while True:\n        pass\n")
    started = time.monotonic()
    page.get_by_role("button", name="Run", exact=True).click()
    banner = verdict(page, "Time Limit Exceeded", 240)
    took = time.monotonic() - started
    limit = float(re.search(r"more than (\d+(?:\.\d+)?) s \(the limit for 3 cases\)", banner.inner_text()).group(1))
    assert limits_for(problem, True, load=0.0).wall_s <= limit <= most
    # A loop that has used 1.5 s of its own time drops to a low priority, and a dropped run's wall clock is
    # three times its limit (its CPU time stays capped at the limit): on a busy machine (the other tests of a
    # parallel run, or a class) the verdict may take that long, never longer.
    assert took < LONG_RUN_WALL_FACTOR * limit + 12, f"this Run's limit was {limit:g} s; the verdict took {took:.1f} s"
    assert "Example 1" in banner.inner_text(), "the verdict names the case that was running"
    page.close()


def test_a_submit_shows_which_case_it_is_on(server, browser, requests_seen):
    problem = problems.get(GA)
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{GA}")
    set_code(page, problem.reference.replace("def step(carry, batch):",
                                             "def step(carry, batch):\n        jax.debug.print('step')"))
    page.get_by_role("button", name="Submit", exact=True).click()
    status = page.locator(".st-key-run-status")
    status.get_by_text(re.compile(rf"case \d+ of {len(problem.cases())}")).wait_for(timeout=60_000)
    verdict(page, "Accepted")
    page.close()


def test_presenter_layout_puts_the_editor_full_width_and_is_remembered(server, browser, requests_seen):
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    editor = page.locator('iframe[title="streamlit_ace.streamlit_ace"]')
    editor.wait_for(timeout=60_000)
    assert box(editor)["width"] < 0.55 * DESKTOP["width"]
    page.locator('[data-testid="stPopover"] button').first.click()
    page.get_by_text("Presenter layout").click()
    page.wait_for_timeout(1500)
    page.keyboard.press("Escape")
    editor = page.locator('iframe[title="streamlit_ace.streamlit_ace"]')
    page.wait_for_function("() => { const f = document.querySelector('iframe[title=\"streamlit_ace.streamlit_ace\"]');"
                           " return f && f.getBoundingClientRect().width > 1000; }", timeout=30_000)
    assert page.get_by_text("Problem statement").count() >= 1, "the statement is folded above"
    page.screenshot(path=str(ARTIFACTS / "presenter.png"))
    page.wait_for_timeout(800)
    page.reload()
    page.wait_for_function("() => { const f = document.querySelector('iframe[title=\"streamlit_ace.streamlit_ace\"]');"
                           " return f && f.getBoundingClientRect().width > 1000; }", timeout=60_000)
    page.close()


def test_similar_problems_are_links_to_problems_of_the_track(server, browser, requests_seen):
    """The whole track exists: the few similar problems that share a technique are links to their pages, none
    is marked as coming."""
    from pages.views.statement import ranked_similar
    problem = problems.get(REMAT)
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{REMAT}")
    existing = page.locator(".st-key-similar-existing")
    existing.locator("a").first.wait_for(timeout=60_000)
    want = [p.slug for p in ranked_similar(problem)]
    assert 1 <= len(want) <= 4
    assert [a.get_attribute("href") for a in existing.locator("a").all()] == want
    assert page.locator(".st-key-similar-coming").count() == 0 and page.get_by_text("coming soon").count() == 0
    existing.locator("a").first.click()
    page.wait_for_url(re.compile("/" + want[0] + "$"))
    page.close()


def test_ctrl_enter_runs_the_examples_and_reset_asks_first(server, browser, requests_seen):
    remat = problems.get(REMAT)
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{remat.slug}")
    wrong = remat.reference.replace('return {"loss": loss, "grads": grads}', 'return {"loss": 2 * loss, "grads": grads}')
    set_code(page, wrong)
    frame = ace_frame(page)
    frame.locator("#jaxplay-ace-style").wait_for(state="attached", timeout=60_000)
    frame.locator(".ace_content").click()
    page.keyboard.press("Control+Enter")
    banner = verdict(page, "Wrong Answer", 120)
    assert "Run (visible examples)" in banner.inner_text()
    assert get_code(page) == wrong, "Ctrl+Enter must run, not insert a line"
    table = open_tab(page, "Test cases")
    table.locator('[data-testid="stDataFrame"]').first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "wrong-answer.png"))

    page.get_by_role("button", name="Reset").click()
    page.get_by_role("button", name="Reset code").click()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if get_code(page) == remat.starter:
                break
        except Exception:  # noqa: BLE001 - the fresh editor may still be loading
            pass
        page.wait_for_timeout(250)
    assert get_code(page) == remat.starter
    page.wait_for_timeout(800)
    page.reload()
    ace_frame(page)
    page.wait_for_timeout(1000)
    assert get_code(page) == remat.starter, "a reset also forgets the code saved in the browser"
    page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_home_lists_every_problem(server, browser, requests_seen, scheme):
    page = new_page(browser, requests_seen, scheme=scheme)
    page.goto(server + "/")
    main = page.locator('[data-testid="stMain"]')
    for p in problems.registry().values():
        main.get_by_text(p.title, exact=True).first.wait_for(timeout=30_000)
    assert page.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0
    page.screenshot(path=str(ARTIFACTS / f"home-{scheme}.png"))
    page.close()


@pytest.fixture(scope="module")
def listener():
    """A local HTTP server that records every request: a hostile string that makes the browser fetch
    anything shows up here."""
    import http.server
    import threading

    hits: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the standard library's name
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd.server_address[1], hits
    httpd.shutdown()


def hostile_text(port: int) -> str:
    return (f"x` ![img](http://127.0.0.1:{port}/md-image) <img src=http://127.0.0.1:{port}/html-image "
            f"onerror=\"alert('onerror')\"> [link](javascript:alert('js-link')) :red[red] $x$ `y")


def short_hostile_text(port: int) -> str:
    return f"x` ![img](http://127.0.0.1:{port}/md-image) <img src=http://127.0.0.1:{port}/k onerror=alert(1)> `y"


def test_learner_text_is_only_text_everywhere_it_can_appear(server, browser, requests_seen, listener):
    """Hostile strings in an exception message, an output key, a function name, printed output and a custom
    input run: shown literally in the verdict, case and requirement messages, console, traceback, jaxpr,
    structure and custom input; the browser fetches nothing and runs nothing."""
    port, hits = listener
    text = hostile_text(port)
    page = new_page(browser, requests_seen)
    ran: list[str] = []
    page.on("dialog", lambda d: (ran.append(d.message), d.dismiss()))
    page.on("console", lambda m: ran.append(m.text) if ("onerror" in m.text or "js-link" in m.text) else None)
    wrong_key = f"""import jax
import jax.numpy as jnp
H = {text!r}
K = {short_hostile_text(port)!r}  # an output key: the grader reads keys of up to 100 characters


def remat_mlp_block(params, x, y):
    print(H)
    def inner(v):
        return v * 1.0
    inner.__name__ = inner.__qualname__ = H
    loss = jax.jit(inner)(jnp.sum(x)) * 0.0
    return {{"loss": loss, "grads": params, K: loss}}
"""
    # The reference, raising on Example 2 only: the requirements hold where it traced, so their messages
    # quote the exception ("Not checked on every case: Example 2 raised (...)").
    raises = f"H = {text!r}\n" + problems.get(REMAT).reference.replace(
        "def remat_mlp_block(params, x, y):\n",
        "def remat_mlp_block(params, x, y):\n    print(H)\n    import sys\n    print(H, file=sys.stderr)\n"
        "    if x.shape[0] == 2:\n        raise ValueError(H)\n")
    assert "raise ValueError(H)" in raises
    page.goto(f"{server}/{REMAT}")
    shown = []
    set_code(page, wrong_key)
    page.get_by_role("button", name="Run", exact=True).click()
    banner = verdict(page, "Wrong Answer", 120)
    shown.append(banner.inner_text())
    for tab in ("jaxpr", "Structure"):
        open_tab(page, tab)
        page.wait_for_timeout(1500)

    set_code(page, raises)
    page.get_by_role("button", name="Run", exact=True).click()
    banner = verdict(page, "Runtime Error", 120)
    shown.append(banner.inner_text())
    shown.append(open_tab(page, "Requirements").inner_text())
    shown.append(open_tab(page, "Console").inner_text())
    panel = open_tab(page, "Custom input")
    panel.get_by_role("combobox").first.click()
    page.get_by_role("option", name="Example 2").click()
    panel.get_by_role("button", name="Run custom input").click()
    page.get_by_text("could not run this input").first.wait_for(timeout=120_000)
    shown.append(panel.inner_text())
    page.screenshot(path=str(ARTIFACTS / "hostile-text.png"))
    page.wait_for_timeout(2000)

    literal = f"![img](http://127.0.0.1:{port}/md-image)"
    assert literal in shown[0] and "unexpected key" in shown[0], "an output key, in the verdict, as typed"
    assert literal in shown[1] and "<img src=" in shown[1], "an exception message, in the verdict, as typed"
    assert literal in shown[2], "quoted in a requirement message, as typed"
    assert shown[3].count(literal) >= 3, "stdout, stderr and the traceback, as typed"
    assert literal in shown[4], "a custom input run's error, as typed"
    assert hits == [], f"the browser fetched {hits}"
    assert ran == [], f"something ran: {ran}"
    assert page.locator('a[href^="javascript:"]').count() == 0
    assert page.locator(f'img[src*="{port}"]').count() == 0
    page.close()


def test_nothing_the_pages_loaded_left_localhost(server, browser, requests_seen):
    """Fonts, icons, the page icon, Graphviz, KaTeX: everything came from the server itself (every page this
    module opened, and one more visit of its own, so the check holds whatever ran before it in this process)."""
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{GA}")
    page.get_by_role("heading", name=problems.get(GA).title).wait_for(timeout=60_000)
    ace_frame(page)
    page.wait_for_timeout(1000)
    page.close()
    assert len(requests_seen) > 50
    outside = sorted({u for u in requests_seen if not u.startswith(("http://127.0.0.1:", "data:", "blob:", "about:"))})
    assert outside == []


# Typed at a normal pace, key by key, as a learner types: the words that used to be swallowed by live
# autocompletion ("batch" + Enter became "microbatches", a word of the starter's docstring; "v0 = 0" + Enter
# became "v0 = v0") end lines here.
TYPED = problems.get(GA).reference.replace(
    "        loss, grads = jax.value_and_grad(_loss)(params, *batch)\n"
    "        return (loss_sum + loss, jax.tree.map(jnp.add, grad_sum, grads)), None\n",
    "        xb, yb = batch\n"
    "        v0 = 0\n"
    "        loss, grads = jax.value_and_grad(_loss)(params, xb, yb)\n"
    "        return (loss_sum + loss + v0, jax.tree.map(jnp.add, grad_sum, grads)), None\n").replace(
    # one line: typed across lines, Ace's own closing brace would stay below the typed one
    '    return {\n        "loss": loss_sum / num_microbatches,\n'
    '        "grads": jax.tree.map(lambda g: g / num_microbatches, grad_sum),\n    }\n',
    '    n = num_microbatches\n'
    '    return {"loss": loss_sum / n, "grads": jax.tree.map(lambda g: g / n, grad_sum)}\n')


def type_code(page, code: str, delay_ms: int = 15) -> None:
    """Type ``code`` into the editor with the keyboard: each line's text, then Enter. Ace indents a new line
    itself; that indentation is taken back with the keyboard (Shift+Home, Backspace) before the line's own,
    so the text ends up exactly as written."""
    frame = ace_frame(page)
    frame.locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    for i, line in enumerate(code.split("\n")):
        if i:
            page.keyboard.press("Enter")
            page.wait_for_timeout(60)
            column = frame.evaluate("() => ace.edit(document.querySelector('.ace_editor')).getCursorPosition().column")
            if column:
                page.keyboard.press("Shift+Home")
                page.keyboard.press("Backspace")
        if line:
            page.keyboard.type(line, delay=delay_ms)
            page.wait_for_timeout(250)  # long enough for a live suggestion to pop up, as it did for learners


def test_code_typed_with_the_keyboard_is_kept_line_for_line_and_accepted(server, browser, requests_seen):
    """Issue 21: Enter always starts a new line (live autocompletion is off by default); what was typed is what
    is graded."""
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{GA}")
    type_code(page, TYPED)
    page.wait_for_timeout(500)
    typed = get_code(page)
    # Ace closes brackets and quotes itself and skips over them when they are typed: the text is the same.
    assert typed.rstrip("\n").split("\n") == TYPED.rstrip("\n").split("\n")
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Accepted", 120)
    page.screenshot(path=str(ARTIFACTS / "typed-with-keyboard.png"))
    page.close()


PALLAS = "fused-row-softmax-with-pallas"
TYPED_KERNEL = problems.get(PALLAS).reference.replace(
    # the call's arguments on one line each: typed across lines, Ace's own closing brackets would stay below
    "    return pl.pallas_call(\n"
    "        softmax_kernel,\n"
    "        grid=(m // bm,),\n"
    "        in_specs=[pl.BlockSpec((bm, n), lambda i: (i, 0))],\n"
    "        out_specs=pl.BlockSpec((bm, n), lambda i: (i, 0)),\n"
    "        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),\n"
    "    )(x)\n",
    "    spec = pl.BlockSpec((bm, n), lambda i: (i, 0))\n"
    "    shape = jax.ShapeDtypeStruct((m, n), x.dtype)\n"
    "    call = pl.pallas_call(softmax_kernel, grid=(m // bm,), in_specs=[spec], out_specs=spec, out_shape=shape)\n"
    "    return call(x)\n")


def test_a_pallas_kernel_typed_with_the_keyboard_is_run_and_its_requirements_named(server, browser, requests_seen):
    """The Pallas track as a learner meets it: a kernel typed key by key (refs, ``[...]``, a ``BlockSpec``'s
    lambda) is kept as typed, runs on the CPU, and its requirements say what held, at the line that calls it;
    the TPU compile is left to Submit, and the row says so."""
    assert "return call(x)" in TYPED_KERNEL, "the reference changed: retype the call on one line"
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{PALLAS}")
    type_code(page, TYPED_KERNEL)
    page.wait_for_timeout(500)
    assert get_code(page).rstrip("\n").split("\n") == TYPED_KERNEL.rstrip("\n").split("\n")
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Accepted", 120)
    reqs = open_tab(page, "Requirements")
    grid = reqs.locator(".st-key-req-pallas-grid")
    grid.get_by_text("line 18", exact=False).first.wait_for()
    assert "✓" in grid.inner_text() and "(2,)" in grid.inner_text()
    assert "✓" in reqs.locator(".st-key-req-fused-in-kernel").inner_text()
    assert "Checked when you submit" in reqs.locator(".st-key-req-compiles-for-tpu-v5e").inner_text()
    page.screenshot(path=str(ARTIFACTS / "pallas-typed-with-keyboard.png"))
    page.close()


def test_the_presenter_layout_at_the_largest_font_scales_what_a_class_reads_and_shows_the_verdict(
        server, browser, requests_seen):
    """Issue 21: on a 1920x1080 projector with the largest font, the verdict sat at the bottom edge at 16 px;
    the font setting enlarged only the editor."""
    page = new_page(browser, requests_seen, viewport={"width": 1920, "height": 1080})
    page.add_init_script("window.localStorage.setItem('jaxplay:prefs', JSON.stringify("
                         "{presenter: true, font_size: 28, keybinding: 'Default'}))")
    page.goto(f"{server}/{GA}")
    set_code(page, problems.get(GA).reference)
    page.get_by_role("button", name="Run", exact=True).click()
    banner = verdict(page, "Accepted", 120)
    page.wait_for_timeout(1500)
    size = float(banner.locator("p").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    assert size >= 24, f"the verdict is drawn at {size} px"
    summary = page.get_by_text("Problem statement").first
    assert float(summary.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 22
    b = box(banner)
    assert 0 <= b["y"] and b["y"] + min(b["height"], 200) <= 1080, f"the verdict is off screen at y {b['y']}"
    page.screenshot(path=str(ARTIFACTS / "presenter-largest-font.png"))
    page.close()


# Issue 32: keystrokes as a learner types them, each line's own text and Enter, never taking back Ace's
# indentation ("\b" is a Backspace, to leave a block); what the editor then holds is the keystrokes' intent.
TYPED_BLOCKS = {
    "dict": (['d = {', '\n', '"a": 1,', '\n', '"b": [1, 2],', '\n', '}', '\n', 'x = d'],
             'd = {\n    "a": 1,\n    "b": [1, 2],\n}\nx = d'),
    "list": (['xs = [', '\n', '1,', '\n', '2,', '\n', ']', '\n', 'n = len(xs)'],
             'xs = [\n    1,\n    2,\n]\nn = len(xs)'),
    "call": (['y = f(', '\n', 'a,', '\n', 'b=2,', '\n', ')', '\n', 'z = y'],
             'y = f(\n    a,\n    b=2,\n)\nz = y'),
    "call closed after an argument": (['y = f(', '\n', 'a,', '\n', 'b)', '\n', 'z = y'],
                                      'y = f(\n    a,\n    b)\nz = y'),
    "strings with quotes": (['s = "it\'s"', '\n', 't = \'say "hi"\'', '\n', 'u = f"{s}!"', '\n',
                             'v = {"k": "(x]"}', '\n', 'w = ""'],
                            's = "it\'s"\nt = \'say "hi"\'\nu = f"{s}!"\nv = {"k": "(x]"}\nw = ""'),
    "return a dict": (['def f(x):', '\n', 'return {', '\n', '"loss": x,', '\n', '"grads": [x, x],', '\n', '}'],
                      'def f(x):\n    return {\n        "loss": x,\n        "grads": [x, x],\n    }'),
    "nested block": (['def g(n):', '\n', 'out = {', '\n', '"a": [', '\n', '1,', '\n', '],', '\n', '}', '\n',
                      'for i in range(n):', '\n', 'out["a"].append((i, {', '\n', '"i": i,', '\n', '}))', '\n',
                      '\b', 'return out'],
                     'def g(n):\n    out = {\n        "a": [\n            1,\n        ],\n    }\n'
                     '    for i in range(n):\n        out["a"].append((i, {\n            "i": i,\n        }))\n'
                     '    return out'),
}


@pytest.mark.parametrize("name", list(TYPED_BLOCKS))
def test_brackets_typed_across_lines_close_where_the_keystrokes_say(server, browser, requests_seen, name):
    keys, expected = TYPED_BLOCKS[name]
    page = new_page(browser, requests_seen)
    page.goto(f"{server}/{GA}")
    frame = ace_frame(page)
    frame.locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    for key in keys:
        if key == "\n":
            page.keyboard.press("Enter")
        elif key == "\b":
            page.keyboard.press("Backspace")
        else:
            page.keyboard.type(key, delay=10)
        page.wait_for_timeout(40)
    page.wait_for_timeout(300)
    typed = get_code(page)
    assert typed == expected, f"typed:\n{typed}\nexpected:\n{expected}"
    compile(typed, "typed.py", "exec")
    page.close()
