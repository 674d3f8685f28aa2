"""The learner's page in Chromium, issue 46: every link lands on its line, nothing hides behind a bar, the
case table's Message column is whole, the editor adds no trailing spaces, and the charts keep one colour per
series. At 1400x900, on a 390x844 phone in dark mode and at 1920x1080, where the item applies.

One server and one browser for the module (``browser_helpers``); screenshots go to ``artifacts/``.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import problems
from browser_helpers import (ARTIFACTS, DESKTOP, PHONE, ace_frame, box, get_code, launch, new_page, open_tab,
                             set_code, start_server, stop_server, verdict)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GA = "gradient-accumulation-with-scan"
REMAT = "rematerialized-mlp-block"
PROJECTOR = {"width": 1920, "height": 1080}
SUBMISSIONS = Path(__file__).resolve().parents[1] / "problems" / GA / "submissions"
PYTHON_LOOP = (SUBMISSIONS / "requirements_not_met" / "python_loop.py").read_text()
SUMS = (SUBMISSIONS / "wrong_answer" / "sums_instead_of_averaging.py").read_text()
VIEWS = [(DESKTOP, "light"), (PHONE, "dark"), (PROJECTOR, "light")]
VIEW_IDS = ["1400x900", "phone-dark", "1920x1080"]


@pytest.fixture(scope="module")
def server():
    proc, url, log = start_server("streamlit-learner-page.log", env={"JAXPLAY_COST_SIZE": "small"})
    yield url
    stop_server(proc, log)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def _free_screen(page) -> tuple[float, float]:
    """(top, bottom) of the part of the screen nothing is pinned over: under the top navigation, above a
    phone's pinned Run bar."""
    height = page.viewport_size["height"]
    bar = page.locator(".st-key-editor-actions").first
    pinned = bar.evaluate("el => getComputedStyle(el).position") == "fixed"
    return 60.0, (box(bar)["y"] if pinned else float(height))


def _line_in_view(page, n: str) -> None:
    """Line ``n`` of the learner's listing is whole inside the listing's visible part and on the free screen."""
    listing = page.locator(".jaxplay-jaxpr.mine")
    line = listing.locator(f'[data-line="{n}"]')
    line.wait_for(timeout=60_000)
    page.wait_for_timeout(1500)  # a rerun may draw the listing again meanwhile: the jump must survive it
    lb, tb = box(listing), box(line)
    top, bottom = _free_screen(page)
    assert lb["y"] <= tb["y"] and tb["y"] + tb["height"] <= lb["y"] + lb["height"], \
        f"line {n} at y {tb['y']:.0f}, the listing's visible part {lb['y']:.0f}-{lb['y'] + lb['height']:.0f}"
    assert top <= tb["y"] and tb["y"] + tb["height"] <= bottom - 4, \
        f"line {n} at y {tb['y']:.0f}-{tb['y'] + tb['height']:.0f}, the free screen {top:.0f}-{bottom:.0f}"


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_a_requirements_jump_link_lands_on_its_line_in_view(server, browser, view):
    """From the Requirements tab, link "39" opened the jaxpr at lines 1-10; inside the jaxpr tab, "87" left
    line 87 as the last, half-cut row of the screen."""
    viewport, scheme = view
    page = new_page(browser, [], viewport=viewport, scheme=scheme)
    page.goto(f"{server}/{GA}")
    set_code(page, PYTHON_LOOP)
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Requirements Not Met", 240)
    reqs = open_tab(page, "Requirements")
    reqs.locator('a[data-jaxpr-line="39"]').first.click()
    _line_in_view(page, "39")
    page.screenshot(path=str(ARTIFACTS / f"jump-39-{'x'.join(map(str, viewport.values()))}.png"))
    page.locator('.st-key-tab-jaxpr a[data-jaxpr-line="87"]').first.click()
    _line_in_view(page, "87")
    page.screenshot(path=str(ARTIFACTS / f"jump-87-{'x'.join(map(str, viewport.values()))}.png"))
    page.close()


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_the_case_strip_is_in_view_after_a_run(server, browser, view):
    """On a phone the strip (✓ Ex 1 ✓ Ex 2 ...) sat behind the pinned Run bar: the verdict was on screen, so
    nothing moved, and the strip under it was hidden. The page is scrolled first so that the verdict lands just
    above the bar (the case that hid it)."""
    viewport, scheme = view
    page = new_page(browser, [], viewport=viewport, scheme=scheme)
    page.goto(f"{server}/{REMAT}")
    set_code(page, problems.get(REMAT).reference)
    page.get_by_role("button", name="Submit", exact=True).click()
    verdict(page, "Submit (examples", 240)
    strip = page.locator(".st-key-case-strip")
    strip.wait_for()
    page.wait_for_timeout(1500)
    top, bottom = _free_screen(page)
    vb = box(page.locator(".st-key-verdict"))
    # scroll so that the verdict's bottom sits 20 px above the free screen's end, then Run
    page.evaluate("""dy => { const el = [document.querySelector('[data-testid="stMain"]'),
        document.querySelector('[data-testid="stAppViewContainer"]'), document.scrollingElement]
        .find((e) => e && e.scrollHeight > e.clientHeight + 1); el.scrollBy(0, dy); }""",
                  vb["y"] + vb["height"] - (bottom - 20))
    page.wait_for_timeout(500)
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Run (visible examples)", 240)
    page.wait_for_timeout(2000)  # the page scrolls them into view, smoothly
    vb, sb = box(page.locator(".st-key-verdict")), box(strip)
    assert top - 10 <= vb["y"], f"the verdict at y {vb['y']:.0f}"
    assert sb["y"] + sb["height"] <= bottom, \
        f"the case strip ends at y {sb['y'] + sb['height']:.0f}, the free screen at {bottom:.0f}"
    page.screenshot(path=str(ARTIFACTS / f"case-strip-{'x'.join(map(str, viewport.values()))}-{scheme}.png"))
    page.close()


def _columns(image: np.ndarray) -> list[int]:
    """The x of each vertical separator the grid draws across its header row."""
    band = image[4:30].astype(int)
    background = np.median(band.reshape(-1, band.shape[-1]), axis=0)
    differs = np.abs(band - background).sum(axis=-1) > 12
    xs = [x for x in range(band.shape[1]) if differs[:, x].mean() > 0.9]
    return [x for i, x in enumerate(xs) if i == 0 or x - xs[i - 1] > 3]


@pytest.mark.parametrize("viewport", [DESKTOP, PROJECTOR], ids=["1400x900", "1920x1080"])
def test_the_case_tables_message_column_is_whole(server, browser, viewport):
    """"loss: got 2.12034, expected 1.06017" ran off the right edge at 1400 px. The grid draws on a canvas:
    its separators are found in the header row's pixels, and each failing row's message must end before the
    Message column's right edge (a cut text runs up to it)."""
    from PIL import Image
    page = new_page(browser, [], viewport=viewport)
    page.goto(f"{server}/{GA}")
    set_code(page, SUMS)
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Wrong Answer", 240)
    grid = open_tab(page, "Test cases").locator('[data-testid="stDataFrame"]').first
    grid.wait_for()
    page.wait_for_timeout(1500)
    grid.scroll_into_view_if_needed()
    headers = grid.evaluate("g => Array.from(g.querySelectorAll('th')).map(e => e.innerText)")
    assert "Message" in headers, headers
    image = np.asarray(Image.open(io.BytesIO(grid.screenshot())).convert("RGB"))
    separators = _columns(image)
    k = headers.index("Message")
    assert len(separators) > k, f"the Message column's right edge is off the grid (separators at {separators})"
    left, right = (separators[k - 1] if k else 0), separators[k]
    rows = 0
    for y in range(35, image.shape[0] - 35, 35):  # the body's rows (35 px each)
        cell = image[y + 8:y + 28, left + 2:right - 1].astype(int)
        background = np.median(cell.reshape(-1, 3), axis=0)
        ink = np.where((np.abs(cell - background).sum(axis=-1) > 90).any(axis=0))[0]
        if ink.size:
            rows += 1
            assert ink.max() <= cell.shape[1] - 6, f"a message cut at the column's edge (row at y {y})"
    assert rows >= 3, "the failing rows' messages were found"
    grid.screenshot(path=str(ARTIFACTS / f"case-table-{viewport['width']}.png"))
    page.close()


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_the_editor_leaves_no_trailing_spaces_on_blank_lines(server, browser, view):
    """Ace indents a new line; Enter again left that indentation behind on the blank line. The learner's own
    spaces on a line with text stay as typed."""
    viewport, scheme = view
    page = new_page(browser, [], viewport=viewport, scheme=scheme)
    page.goto(f"{server}/{GA}")
    frame = ace_frame(page)
    frame.locator(".ace_content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    for key in ["def f(x):", "\n", "y = x + 1  ", "\n", "\n", "\n", "z = y", "\n", "\n", "return z"]:
        if key == "\n":
            page.keyboard.press("Enter")
        else:
            page.keyboard.type(key, delay=10)
        page.wait_for_timeout(40)
    page.wait_for_timeout(300)
    assert get_code(page) == "def f(x):\n    y = x + 1  \n\n\n    z = y\n\n    return z"
    page.close()


PALLAS = "blocked-matmul-with-pallas"
BAR_FILLS = """root => Array.from(root.querySelectorAll('[data-testid="stVegaLiteChart"] path[aria-roledescription="bar"]'))
  .map(p => [p.getAttribute('aria-label') || '', p.getAttribute('fill')])"""


def _fills(page, titles: list[str]) -> dict[str, set[str]]:
    """Each program title -> the colours its bars are drawn in, over every chart on the page."""
    out: dict[str, set[str]] = {}
    for label, fill in page.locator("body").evaluate(BAR_FILLS):
        for title in titles:
            if f"name: {title} · " in label:
                out.setdefault(title, set()).add(fill.lower())
    return out


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_the_kernel_cost_tab_writes_each_figure_once_in_one_colour_per_program(server, browser, view):
    """The kernel Cost table said roofline 0.087 ms where the chart said 0.0872 ms (GFLOP 17.247 beside 17.2):
    one formatter writes both; each program's bars keep the palette's colour for its role."""
    viewport, scheme = view
    page = new_page(browser, [], viewport=viewport, scheme=scheme)
    page.goto(f"{server}/{PALLAS}")
    ace_frame(page)
    panel = open_tab(page, "Cost")
    panel.locator('[data-testid="stVegaLiteChart"] path[aria-roledescription="bar"]').nth(5).wait_for(timeout=60_000)
    grid = panel.locator('[data-testid="stDataFrame"]').first
    grid.wait_for()
    # the grid draws on a canvas; its accessible table holds the same text
    heads = []
    for _ in range(60):  # the grid's accessible table is filled after the canvas is drawn (later under load)
        heads = grid.evaluate("g => Array.from(g.querySelectorAll('th')).map(e => e.innerText.trim())")
        if "program" in heads:
            break
        page.wait_for_timeout(500)
    rows = grid.evaluate("g => Array.from(g.querySelectorAll('tbody tr'))"
                         ".map(r => Array.from(r.querySelectorAll('td')).map(e => e.innerText.trim()))")
    table = {row[heads.index("program")]: row for row in rows if len(row) == len(heads)}
    labels = [lab for lab, _ in page.locator("body").evaluate(BAR_FILLS)]
    checked = 0
    for program, row in table.items():  # (a phone's grid holds only the columns it shows: those are compared)
        for column, unit in (("roofline (ms)", "ms"), ("HBM bytes (MiB)", "MiB"), ("planned peak (MiB)", "MiB")):
            if column not in heads:
                continue
            said = f"{program} · {row[heads.index(column)]} {unit}"
            assert any(said in lab for lab in labels), f"{said!r} not in the charts' labels {labels}"
            checked += 1
    assert checked >= (2 if viewport == PHONE else 6), heads
    from grader.cost.charts import ROLE_COLOURS
    from grader.grading.numbers import figure
    assert all(row[heads.index("GFLOP")] == figure(float(row[heads.index("GFLOP")].replace(",", "")))
               for row in table.values() if "GFLOP" in heads)
    fills = _fills(page, ["reference kernel"])
    assert fills == {"reference kernel": {ROLE_COLOURS["reference"]}}, fills
    page.close()


def test_a_program_keeps_its_colour_on_the_cpu_chart_and_the_tpu_chart(server, browser):
    """"your code" was pink on the CPU chart and orange on the TPU chart; "dots_saveable (reference)" blue on
    one, pink on the other."""
    problem = problems.get(REMAT)
    titles = ["your code", "dots_saveable (reference)", "no checkpoint", "nothing_saveable"]
    page = new_page(browser, [])
    page.goto(f"{server}/{REMAT}")
    set_code(page, problem.reference)
    panel = open_tab(page, "Cost")
    seen: dict[str, set[str]] = {}
    for target in ("This machine", "TPU v5e"):
        radio = panel.get_by_text(target, exact=False)
        if radio.count():
            radio.first.click()
            page.wait_for_timeout(1500)
        panel.get_by_role("button", name="Measure cost").click()
        chart = problem.insight.charts_for("tpu" if target.startswith("TPU") else "cpu")[0]
        page.get_by_text(chart.title, exact=True).wait_for(timeout=400_000)
        panel.locator('[data-testid="stVegaLiteChart"] path[aria-roledescription="bar"]').first.wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        for title, fills in _fills(page, titles).items():
            seen.setdefault(title, set()).update(fills)
        page.screenshot(path=str(ARTIFACTS / f"cost-colours-{target.split()[0].lower()}.png"), full_page=True)
    assert all(len(fills) == 1 for fills in seen.values()), seen
    from grader.cost.charts import ROLE_COLOURS
    assert seen["your code"] == {ROLE_COLOURS["learner"]}, seen
    assert seen["dots_saveable (reference)"] == {ROLE_COLOURS["reference"]}, seen
    page.close()


ROWS_OF_ONE = (Path(__file__).resolve().parents[1] / "problems" / PALLAS / "submissions" / "requirements_not_met"
               / "rows_of_one.py").read_text()


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_a_one_row_block_is_named_on_run_and_mosaics_refusal_reads_as_words_on_submit(server, browser, view):
    """A (1, N) block: the Run said only "pallas-grid" and the reason came a Submit later; the Submit's refusal
    ended "in memory space <MemorySpace.DEFAULT: 'default'>"."""
    viewport, scheme = view
    page = new_page(browser, [], viewport=viewport, scheme=scheme)
    page.goto(f"{server}/{PALLAS}")
    set_code(page, ROWS_OF_ONE)
    page.get_by_role("button", name="Run", exact=True).click()
    verdict(page, "Requirements Not Met", 240)
    row = open_tab(page, "Requirements").locator(".st-key-req-compiles-for-tpu-v5e")
    row.get_by_text("one row high", exact=False).first.wait_for(timeout=30_000)
    assert "Checked when you submit" in row.inner_text()
    page.get_by_role("button", name="Submit", exact=True).click()
    verdict(page, "Submit (examples", 400)
    row = open_tab(page, "Requirements").locator(".st-key-req-compiles-for-tpu-v5e")
    row.get_by_text("does not compile for a TPU v5e", exact=False).first.wait_for(timeout=30_000)
    said = row.inner_text()
    assert "in the default memory space" in said and "<MemorySpace" not in said, said
    assert "one row high" not in said, "the forecast gives way to the compile's own word"
    page.close()
